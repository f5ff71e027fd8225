package shell

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Resolution is where a command name leads.
type Resolution struct {
	// Path is the executable found: on the PATH, in a package runner's local bin directory,
	// or a path relative to the working directory made absolute. "" when nothing was found.
	Path string
	// Real is Path with every symlink resolved.
	Real string
}

// Resolver finds the executable a command name runs, the way execvp would, with a small cache
// whose entries expire after a TTL (executables come and go: a cached answer is trusted for at
// most that long). It is safe for concurrent use.
type Resolver struct {
	dirs []string
	ttl  time.Duration
	// epoch is when the resolver was made; expiries are durations since it, read from the
	// monotonic clock alone (half the cost of time.Now). now, when set, is a test's clock.
	epoch time.Time
	now   func() time.Time

	mu    sync.RWMutex
	cache map[resolveKey]resolveEntry
	bare  map[string]resolveEntry // names looked up on the PATH only (the common case)
}

type resolveKey struct{ name, cwd, local string }

type resolveEntry struct {
	res     Resolution
	expires time.Duration // since epoch
}

// maxCache bounds the cache; it is emptied when full.
const maxCache = 4096

// NewResolver returns a resolver searching pathList (a PATH value). Relative and empty PATH
// entries are ignored: the working directory never supplies a bare command name. ttl <= 0
// disables caching.
func NewResolver(pathList string, ttl time.Duration) *Resolver {
	var dirs []string
	for _, d := range filepath.SplitList(pathList) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		dirs = append(dirs, filepath.Clean(d))
	}
	return &Resolver{dirs: dirs, ttl: ttl, epoch: time.Now(), cache: map[resolveKey]resolveEntry{}, bare: map[string]resolveEntry{}}
}

// SetClock replaces the resolver's clock (for tests).
func (r *Resolver) SetClock(now func() time.Time) { r.now, r.epoch = now, now() }

// clock is the time since epoch.
func (r *Resolver) clock() time.Duration {
	if r.now != nil {
		return r.now().Sub(r.epoch)
	}
	return time.Since(r.epoch)
}

// Dirs returns the directories searched.
func (r *Resolver) Dirs() []string { return append([]string(nil), r.dirs...) }

// Invalidate forgets every cached resolution.
func (r *Resolver) Invalidate() {
	r.mu.Lock()
	r.cache = map[resolveKey]resolveEntry{}
	r.bare = map[string]resolveEntry{}
	r.mu.Unlock()
}

// Resolve finds what name runs in cwd. local is a directory relative to cwd (or one of its
// parents) searched before the PATH, for package runners ("node_modules/.bin").
func (r *Resolver) Resolve(name, cwd, local string) Resolution {
	if name == "" || strings.IndexByte(name, 0) >= 0 {
		return Resolution{}
	}
	bare := local == "" && !strings.ContainsRune(name, '/')
	key := resolveKey{name: name}
	if local != "" || !bare && !filepath.IsAbs(name) {
		key.cwd, key.local = cwd, local
	}
	var now time.Duration
	if r.ttl > 0 {
		now = r.clock()
		var e resolveEntry
		var ok bool
		r.mu.RLock()
		if bare {
			e, ok = r.bare[name]
		} else {
			e, ok = r.cache[key]
		}
		r.mu.RUnlock()
		if ok && now < e.expires {
			return e.res
		}
	}
	res := r.lookup(name, cwd, local)
	if r.ttl > 0 {
		e := resolveEntry{res: res, expires: now + r.ttl}
		r.mu.Lock()
		if len(r.cache)+len(r.bare) >= maxCache {
			r.cache = map[resolveKey]resolveEntry{}
			r.bare = map[string]resolveEntry{}
		}
		if bare {
			r.bare[name] = e
		} else {
			r.cache[key] = e
		}
		r.mu.Unlock()
	}
	return res
}

func (r *Resolver) lookup(name, cwd, local string) Resolution {
	if strings.ContainsRune(name, '/') {
		p := name
		if !filepath.IsAbs(p) {
			if cwd == "" || !filepath.IsAbs(cwd) {
				return Resolution{}
			}
			p = filepath.Join(cwd, p)
		}
		p = filepath.Clean(p)
		if isExecutable(p) {
			return Resolution{Path: p, Real: realPath(p)}
		}
		return Resolution{}
	}
	if local != "" && cwd != "" && filepath.IsAbs(cwd) {
		for dir := filepath.Clean(cwd); ; dir = filepath.Dir(dir) {
			p := filepath.Join(dir, local, name)
			if isExecutable(p) {
				return Resolution{Path: p, Real: realPath(p)}
			}
			if dir == filepath.Dir(dir) {
				break
			}
		}
	}
	for _, d := range r.dirs {
		p := filepath.Join(d, name)
		if isExecutable(p) {
			return Resolution{Path: p, Real: realPath(p)}
		}
	}
	return Resolution{}
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

func realPath(p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return p
	}
	return r
}
