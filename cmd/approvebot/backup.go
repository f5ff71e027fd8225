package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/approvebot/approvebot/client"
	"github.com/approvebot/approvebot/store"
)

// cmdBackup asks the running server for a consistent copy of its database (the server holds
// the file's lock, so the copy comes through GET /v1/backup), checks the copy, and only then
// puts it at FILE.
func cmdBackup(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	const usage = "backup [flags] FILE"
	fs := newFlagSet("backup", usage, stderr)
	var sf serverFlags
	sf.register(fs)
	timeout := fs.Duration("timeout", time.Hour, "give up after this long")
	force := fs.Bool("force", false, "replace FILE if it exists")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return parseError(err, exitUsage)
	}
	if len(pos) != 1 {
		return usageError(fs, stderr, usage, "give the file to write the copy to")
	}
	dst := pos[0]
	if _, err := os.Stat(dst); err == nil && !*force {
		return fmt.Errorf("%s exists: choose another name, or -force to replace it", dst)
	}
	c, err := sf.client(client.Options{UserAgent: "approvebot-cli"})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".partial-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	n, err := c.Backup(ctx, tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	rep, err := store.Verify(tmp.Name())
	if err != nil {
		return fmt.Errorf("checking the copy: %w", err)
	}
	if !rep.OK() {
		printVerify(stderr, rep)
		return errors.New("the copy the server sent does not verify; it was not kept")
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return err
	}
	if d, err := os.Open(filepath.Dir(dst)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	fmt.Fprintf(stdout, "wrote %s: %d bytes, verified (%d requests, %d audit entries)\n", dst, n, rep.Records["requests"], rep.Records["audit"])
	return nil
}

// cmdVerify checks a database file completely, with approvebot stopped.
func cmdVerify(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	const usage = "verify FILE"
	fs := newFlagSet("verify", usage, stderr)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return parseError(err, exitUsage)
	}
	if len(pos) != 1 {
		return usageError(fs, stderr, usage, "give the database file to check")
	}
	rep, err := store.Verify(pos[0])
	if err != nil {
		return err
	}
	printVerify(stdout, rep)
	if !rep.OK() {
		return &exitError{code: 1, msg: fmt.Sprintf("%s is damaged: restore it from a backup (docs/operations.md, \"Backups\")", pos[0])}
	}
	return nil
}

func printVerify(w io.Writer, r *store.VerifyReport) {
	fmt.Fprintf(w, "%s: %d bytes", r.Path, r.Size)
	if r.PageSize > 0 {
		fmt.Fprintf(w, ", page size %d, %d pages in use, transaction %d", r.PageSize, r.Pages, r.TxID)
	}
	fmt.Fprintln(w)
	if len(r.Records) > 0 {
		names := make([]string, 0, len(r.Records))
		for n := range r.Records {
			names = append(names, n)
		}
		sort.Strings(names)
		parts := make([]string, 0, len(names))
		for _, n := range names {
			parts = append(parts, fmt.Sprintf("%s %d", n, r.Records[n]))
		}
		fmt.Fprintf(w, "records: %s\n", strings.Join(parts, ", "))
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "DAMAGED: %s\n", p)
	}
	for _, d := range r.Damaged {
		fmt.Fprintf(w, "DAMAGED RECORD: bucket %s, key %s: %s\n", d.Bucket, d.Key, d.Error)
	}
	for _, x := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", x)
	}
	if r.OK() {
		fmt.Fprintln(w, "ok: no damage found")
	}
}
