package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/approvebot/approvebot/internal/testserver"
)

// The fault suites that need root: a full file system (tmpfs), an immutable file
// (chattr +i: CI runs as root, so mode bits would not stop it), a file system turned
// read-only by an error, and a disk that answers every I/O with EIO (an ext4 shutdown).

func needRoot(t *testing.T) {
	t.Helper()
	if os.Getenv("APPROVEBOT_INTEGRATION") != "1" {
		t.Skip("fault injection (mounts, chattr, file-system shutdown): set APPROVEBOT_INTEGRATION=1 and run as root")
	}
	if os.Geteuid() != 0 {
		t.Skip("fault injection needs root (mounts, chattr)")
	}
}

func sh(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// mountTmpfs mounts a tmpfs of the given size and returns its directory.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tmpfs")
	os.Mkdir(dir, 0o700)
	sh(t, "mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir)
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// ext4 is a small ext4 file system on a loop device, mounted with errors=remount-ro.
type ext4 struct {
	img, dir string
}

func mountExt4(t *testing.T) *ext4 {
	t.Helper()
	base := t.TempDir()
	fs := &ext4{img: filepath.Join(base, "fs.img"), dir: filepath.Join(base, "mnt")}
	os.Mkdir(fs.dir, 0o700)
	sh(t, "truncate", "-s", "64M", fs.img)
	sh(t, "mkfs.ext4", "-q", "-F", fs.img)
	fs.mount(t)
	t.Cleanup(func() { exec.Command("umount", "-l", fs.dir).Run() })
	return fs
}

func (fs *ext4) mount(t *testing.T) {
	t.Helper()
	sh(t, "mount", "-o", "loop,errors=remount-ro", fs.img, fs.dir)
}

func (fs *ext4) device(t *testing.T) string {
	t.Helper()
	return filepath.Base(sh(t, "findmnt", "-n", "-o", "SOURCE", fs.dir))
}

// remount unmounts, repairs (e2fsck) and mounts the file system again, as an operator
// would after the fault.
func (fs *ext4) remount(t *testing.T) {
	t.Helper()
	for attempt := 0; ; attempt++ {
		sh(t, "umount", fs.dir)
		// A copy of the image: a mount namespace made meanwhile (another test's sandbox)
		// may still hold the old loop device and its read-only superblock, and mounting
		// the same file would reuse them.
		img := fmt.Sprintf("%s.%d", fs.img, attempt)
		sh(t, "cp", "--sparse=always", fs.img, img)
		fs.img = img
		if out, err := exec.Command("e2fsck", "-f", "-y", fs.img).CombinedOutput(); err != nil {
			var ee *exec.ExitError
			// 1: errors corrected. Anything above is a file system e2fsck could not repair.
			if !errors.As(err, &ee) || ee.ExitCode() > 1 {
				t.Fatalf("e2fsck: %v\n%s", err, out)
			}
		}
		fs.mount(t)
		probe := filepath.Join(fs.dir, ".rw-probe")
		if err := os.WriteFile(probe, nil, 0o600); err == nil {
			os.Remove(probe)
			return
		} else if attempt == 2 {
			dmesg, _ := exec.Command("dmesg").Output()
			lines := strings.Split(strings.TrimSpace(string(dmesg)), "\n")
			t.Fatalf("the file system stays read-only after repair (%s): %v\n%s", sh(t, "findmnt", "-n", "-o", "SOURCE,OPTIONS", fs.dir), err, strings.Join(lines[max(0, len(lines)-15):], "\n"))
		}
	}
}

// waitOption waits until the mount's options include opt (the kernel applies an error's
// remount-ro from a work queue, after the trigger returns).
func (fs *ext4) waitOption(t *testing.T, opt string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(","+sh(t, "findmnt", "-n", "-o", "OPTIONS", fs.dir)+",", ","+opt+",") {
		if time.Now().After(deadline) {
			t.Fatalf("mount option %s never appeared", opt)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// bigAsk is a request whose record takes many pages, so that storing it needs new space.
func bigAsk(session string, i int) map[string]any {
	return bash(session, "deploy "+strings.Repeat(string(rune('a'+i%26)), 48<<10))
}

// TestFaultDiskFull: the file system fills up under the running server. Writes that no
// longer fit are refused with 503 store_unavailable (never 500, never an allow), /healthz
// and the metrics say so, service resumes when space is freed, and every request a client
// was told about is still there after a restart.
func TestFaultDiskFull(t *testing.T) {
	needRoot(t)
	mnt := mountTmpfs(t, "8m")
	s := testserver.Start(t, testserver.Options{Data: filepath.Join(mnt, "approvebot.db")})
	acks := fileRequests(t, s, "full", 12)

	filler, err := os.Create(filepath.Join(mnt, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	for {
		if _, err := filler.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	filler.Close()

	refused := false
	for i := 0; i < 200 && !refused; i++ {
		code, _, raw := rawDo(t, s, "POST", "/v1/requests", bytes.NewReader(mustJSON(t, bigAsk("full-big", i))), "Authorization", "Bearer "+agent)
		switch {
		case code == 202:
			var m map[string]any
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			acks[m["id"].(string)] = "pending"
		case code == 503 && errCode(raw) == "store_unavailable":
			refused = true
		default:
			t.Fatalf("with the disk full: %d %s", code, raw)
		}
	}
	if !refused {
		t.Fatal("the disk never filled up for approvebot")
	}
	h := waitHealth(t, s, 503)
	want(t, h, "status", "unhealthy", "store_writable", false)
	if !strings.Contains(h["store_error"].(string), "no space left on device") {
		t.Fatalf("store_error: %v", h)
	}
	if metric(t, s, "approvebot_store_write_errors_total") < 1 || metric(t, s, "approvebot_store_writable") != 0 {
		t.Fatal("the metrics do not show the failed writes")
	}
	if !strings.Contains(s.Logs(), "store cannot write") {
		t.Fatalf("no log line:\n%s", s.Logs())
	}

	os.Remove(filepath.Join(mnt, "filler"))
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, m := s.JSON(t, "POST", "/v1/requests", agent, bigAsk("full-after", 1))
		if code == 202 {
			acks[m["id"].(string)] = "pending"
			break
		}
		if code != 503 || time.Now().After(deadline) {
			t.Fatalf("after freeing space: %d %v", code, m)
		}
		time.Sleep(50 * time.Millisecond)
	}
	waitHealth(t, s, 200)
	s = s.Restart(t)
	checkAcked(t, s, acks)
	s.Stop()
	if out, err := runBinary(testserver.Binary(t), s.Dir, "verify", s.DB); err != nil {
		t.Fatalf("verify after the disk was full (%v):\n%s", err, out)
	}
}

// TestFaultImmutableFile: the database file is made immutable (chattr +i) under the
// running server: EPERM on every write, which is refused with 503 until the flag is lifted.
func TestFaultImmutableFile(t *testing.T) {
	needRoot(t)
	s := testserver.Start(t, testserver.Options{})
	acks := fileRequests(t, s, "imm", 9)
	sh(t, "chattr", "+i", s.DB)
	t.Cleanup(func() { exec.Command("chattr", "-i", s.DB).Run() })

	wantStoreUnavailable(t, s, "POST", "/v1/requests", bash("imm", "deploy immutable"))
	for id, st := range acks {
		if st == "pending" {
			wantStoreUnavailable(t, s, "POST", "/v1/requests/"+id+"/decision", map[string]any{"outcome": "allow_once"})
			if m := mustGet(t, s, id); m["state"] != "pending" {
				t.Fatalf("a refused decision changed the request: %v", m)
			}
			break
		}
	}
	h := waitHealth(t, s, 503)
	want(t, h, "status", "unhealthy", "store_writable", false)
	if !strings.Contains(h["store_error"].(string), "operation not permitted") {
		t.Fatalf("store_error: %v", h)
	}
	sh(t, "chattr", "-i", s.DB)
	waitHealth(t, s, 200)
	acks[pendingID(t, s, bash("imm", "deploy after"))] = "pending"
	s = s.Restart(t)
	checkAcked(t, s, acks)
}

// TestFaultReadOnlyFileSystem: an error turns the file system read-only under the running
// server (ext4 errors=remount-ro). Writes are refused with 503; a restart on it is refused
// with a clear error; after the operator repairs and remounts it, nothing acknowledged is
// lost.
func TestFaultReadOnlyFileSystem(t *testing.T) {
	needRoot(t)
	fs := mountExt4(t)
	opts := testserver.Options{Data: filepath.Join(fs.dir, "approvebot.db")}
	s := testserver.Start(t, opts)
	acks := fileRequests(t, s, "ro", 9)
	if err := os.WriteFile("/sys/fs/ext4/"+fs.device(t)+"/trigger_fs_error", []byte("approvebot fault test"), 0o200); err != nil {
		t.Fatal(err)
	}
	fs.waitOption(t, "emergency_ro")
	wantStoreUnavailable(t, s, "POST", "/v1/requests", bash("ro", "deploy read-only"))
	h := waitHealth(t, s, 503)
	if !strings.Contains(h["store_error"].(string), "read-only file system") {
		t.Fatalf("store_error: %v", h)
	}
	s.Stop()

	opts.Dir = s.Dir
	srv, started := testserver.TryStart(t, opts)
	if started {
		t.Fatal("started on a read-only file system")
	}
	noCrash(t, srv.Logs())
	if !strings.Contains(srv.Logs(), "read-only file system") {
		t.Fatalf("the refusal does not say why:\n%s", srv.Logs())
	}
	fs.remount(t)
	s = testserver.Start(t, opts)
	checkAcked(t, s, acks)
}

// ext4IOCShutdown is EXT4_IOC_SHUTDOWN (_IOR('X', 125, __u32)); with
// EXT4_GOING_FLAGS_NOLOGFLUSH the file system stops as a dying disk would: every later
// I/O fails with EIO.
const (
	ext4IOCShutdown   = 0x8004587D
	ext4GoingNoFlush  = 2
	ioErrorRestartMsg = "I/O error"
)

// TestFaultIOError: the disk answers every I/O with EIO. approvebot refuses every write
// from then on (after a failed write-back a later fsync proves nothing) and says so until
// it is restarted; nothing acknowledged before is lost.
func TestFaultIOError(t *testing.T) {
	needRoot(t)
	fs := mountExt4(t)
	opts := testserver.Options{Data: filepath.Join(fs.dir, "approvebot.db")}
	s := testserver.Start(t, opts)
	acks := fileRequests(t, s, "eio", 9)
	d, err := os.Open(fs.dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetPointerInt(int(d.Fd()), ext4IOCShutdown, ext4GoingNoFlush); err != nil {
		t.Fatalf("EXT4_IOC_SHUTDOWN: %v", err)
	}
	d.Close()
	wantStoreUnavailable(t, s, "POST", "/v1/requests", bash("eio", "deploy on a dead disk"))
	h := waitHealth(t, s, 503)
	if !strings.Contains(h["store_error"].(string), ioErrorRestartMsg) {
		t.Fatalf("store_error: %v", h)
	}
	if got := metric(t, s, "approvebot_store_writable"); got != 0 {
		t.Fatalf("approvebot_store_writable = %v", got)
	}
	s.Kill()
	opts.Dir = s.Dir
	fs.remount(t)
	s = testserver.Start(t, opts)
	checkAcked(t, s, acks)
}
