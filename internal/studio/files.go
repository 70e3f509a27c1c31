package studio

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// ErrOutside is returned for a path that is not under the directories the
// studio was started with (after following symlinks).
var ErrOutside = errors.New("outside the directories connectd studio was started with")

// ErrConflict is returned by a save whose version is not the file's
// version on disk: the file changed since it was loaded.
var ErrConflict = errors.New("the file changed on disk since it was loaded")

// maxFileBytes bounds what a file open or save carries.
const maxFileBytes = 4 << 20

// maxListed bounds how many files a listing returns.
const maxListed = 5000

// editable are the file name extensions the file list shows: pipeline
// configs and the Flink DDL files a catalog reads.
var editable = map[string]bool{".yaml": true, ".yml": true, ".sql": true}

// files is the studio's file access: open, save and list, only under its
// roots. A root is a directory given on the command line, or the
// directory of a file given; roots are kept with their symlinks resolved,
// and every path is resolved the same way before it is compared, so a
// symlink under a root that points out of it is refused like a `..`.
type files struct {
	roots []string
	open  []string // files given on the command line, opened at start
	mu    sync.Mutex
}

// newFiles resolves the command line's paths into roots.
func newFiles(paths []string) (*files, error) {
	f := &files{}
	seen := map[string]bool{}
	var problems []string
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", p, err))
			continue
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", p, err))
			continue
		}
		st, err := os.Stat(real)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", p, err))
			continue
		}
		dir := real
		if !st.IsDir() {
			dir = filepath.Dir(real)
			f.open = append(f.open, real)
		}
		if !seen[dir] {
			seen[dir] = true
			f.roots = append(f.roots, dir)
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("studio: %s", strings.Join(problems, "; "))
	}
	return f, nil
}

// Confine returns the files API's own check for the mounted APIs that read
// files a pipeline names (a catalog file): nil for a path under the
// directories of paths, an error wrapping ErrOutside otherwise.
func Confine(paths []string) (func(path string) error, error) {
	f, err := newFiles(paths)
	if err != nil {
		return nil, err
	}
	return func(p string) error {
		_, err := f.resolve(p)
		return err
	}, nil
}

// resolve returns the real path of p, which must be absolute and, once
// cleaned and with its symlinks followed, under a root. A file that does
// not exist yet is resolved through its directory, which must exist.
func (f *files) resolve(p string) (string, error) {
	if p == "" || !filepath.IsAbs(p) {
		return "", fmt.Errorf("path %q: must be absolute: %w", p, ErrOutside)
	}
	for _, part := range strings.Split(filepath.ToSlash(p), "/") {
		if part == ".." {
			return "", fmt.Errorf("path %q: `..` is not allowed: %w", p, ErrOutside)
		}
	}
	clean := filepath.Clean(p)
	if f.root(clean) == "" {
		return "", fmt.Errorf("path %q: %w", p, ErrOutside)
	}
	real, err := filepath.EvalSymlinks(clean)
	if errors.Is(err, fs.ErrNotExist) {
		dir, derr := filepath.EvalSymlinks(filepath.Dir(clean))
		if derr != nil {
			return "", fmt.Errorf("path %q: %w", p, derr)
		}
		real = filepath.Join(dir, filepath.Base(clean))
	} else if err != nil {
		return "", fmt.Errorf("path %q: %w", p, err)
	}
	if f.root(real) == "" {
		return "", fmt.Errorf("path %q leads to %q: %w", p, real, ErrOutside)
	}
	return real, nil
}

// root returns the root p is under ("" for none).
func (f *files) root(p string) string {
	for _, r := range f.roots {
		rel, err := filepath.Rel(r, p)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return r
		}
	}
	return ""
}

// version identifies a file's content on disk: its modification time and
// the SHA-256 of its bytes. A save carries the version it loaded.
func version(st fs.FileInfo, data []byte) string {
	sum := sha256.Sum256(data)
	return fmt.Sprintf("%d-%s", st.ModTime().UnixNano(), hex.EncodeToString(sum[:8]))
}

// fileDoc is a file as the API carries it.
type fileDoc struct {
	Path    string `json:"path"`
	Content string `json:"content"`
	Version string `json:"version"`
}

// read returns the file at p (already resolved) with its version.
func read(p string) (fileDoc, error) {
	st, err := os.Stat(p)
	if err != nil {
		return fileDoc{}, err
	}
	if !st.Mode().IsRegular() {
		return fileDoc{}, fmt.Errorf("%s is not a regular file", p)
	}
	if st.Size() > maxFileBytes {
		return fileDoc{}, fmt.Errorf("%s is larger than %d bytes", p, maxFileBytes)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return fileDoc{}, err
	}
	return fileDoc{Path: p, Content: string(data), Version: version(st, data)}, nil
}

// save writes content to p (already resolved) if the file's version on
// disk is base ("" for a file that must not exist yet), and returns the
// new version. The write goes to a temporary file in the same directory,
// renamed over the file, so a reader never sees half of it.
func (f *files) save(p, content, base string, force bool) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	mode := fs.FileMode(0o644)
	cur, err := read(p)
	switch {
	case err == nil:
		if !force && cur.Version != base {
			return cur.Version, ErrConflict
		}
		if st, err := os.Stat(p); err == nil {
			mode = st.Mode().Perm()
		}
	case errors.Is(err, fs.ErrNotExist):
		if !force && base != "" {
			return "", ErrConflict // it was deleted since it was loaded
		}
	default:
		return "", err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".studio-*")
	if err != nil {
		return "", err
	}
	_, werr := tmp.WriteString(content)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), mode)); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	doc, err := read(p)
	if err != nil {
		return "", err
	}
	return doc.Version, nil
}

// listing is what GET /api/files returns.
type listing struct {
	Roots     []string `json:"roots"`
	Files     []string `json:"files"`
	Open      []string `json:"open"`
	Truncated bool     `json:"truncated,omitempty"`
}

// list walks the roots for editable files. Hidden directories and
// node_modules are skipped; symlinks are listed only when they resolve
// under a root (directories behind symlinks are not walked).
func (f *files) list() listing {
	out := listing{Roots: f.roots, Open: append([]string{}, f.open...), Files: []string{}}
	seen := map[string]bool{}
	for _, r := range f.roots {
		_ = filepath.WalkDir(r, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			name := d.Name()
			if d.IsDir() {
				if p != r && (strings.HasPrefix(name, ".") || name == "node_modules") {
					return filepath.SkipDir
				}
				return nil
			}
			if !editable[strings.ToLower(filepath.Ext(name))] || seen[p] {
				return nil
			}
			if d.Type()&fs.ModeSymlink != 0 {
				if _, err := f.resolve(p); err != nil {
					return nil
				}
			}
			if len(out.Files) >= maxListed {
				out.Truncated = true
				return filepath.SkipAll
			}
			seen[p] = true
			out.Files = append(out.Files, p)
			return nil
		})
	}
	sort.Strings(out.Files)
	return out
}

// saveRequest is the body of PUT /api/file.
type saveRequest struct {
	Path    string `json:"path"`
	Content string `json:"content"`
	// Version is the version the editor loaded ("" for a new file).
	Version string `json:"version"`
	// Force overwrites whatever is on disk (after the user confirmed).
	Force bool `json:"force"`
}

// ServeHTTP serves /api/file: GET ?path= opens, PUT saves.
func (f *files) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		p, err := f.resolve(r.URL.Query().Get("path"))
		if err != nil {
			writeError(w, statusOf(err), err)
			return
		}
		doc, err := read(p)
		if err != nil {
			writeError(w, statusOf(err), err)
			return
		}
		writeJSON(w, http.StatusOK, doc)
	case http.MethodPut, http.MethodPost:
		var req saveRequest
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxFileBytes*2)).Decode(&req); err != nil {
			writeError(w, http.StatusBadRequest, fmt.Errorf("reading the save request: %w", err))
			return
		}
		p, err := f.resolve(req.Path)
		if err != nil {
			writeError(w, statusOf(err), err)
			return
		}
		if !editable[strings.ToLower(filepath.Ext(p))] {
			writeError(w, http.StatusForbidden, fmt.Errorf("path %q: studio saves only .yaml, .yml and .sql files", req.Path))
			return
		}
		v, err := f.save(p, req.Content, req.Version, req.Force)
		if errors.Is(err, ErrConflict) {
			writeJSON(w, http.StatusConflict, map[string]string{
				"error": fmt.Sprintf("%s: %v; reload it, or save again to overwrite", p, err), "path": p, "version": v,
			})
			return
		}
		if err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"path": p, "version": v})
	default:
		w.Header().Set("Allow", "GET, PUT")
		writeError(w, http.StatusMethodNotAllowed, fmt.Errorf("method %s: use GET or PUT", r.Method))
	}
}

func statusOf(err error) int {
	switch {
	case errors.Is(err, ErrOutside):
		return http.StatusForbidden
	case errors.Is(err, fs.ErrNotExist):
		return http.StatusNotFound
	}
	return http.StatusBadRequest
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, map[string]string{"error": err.Error()})
}
