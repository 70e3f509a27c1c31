// Package studio is `connectd studio`: a local web app, embedded in the
// binary, for editing pipelines with completion, hover docs and live lint
// from the component specs, forms, a pipeline graph, a catalog view and a
// try-it runner (docs/studio.md).
//
// This package is the server and its security, the files API and the
// lint and schema APIs, and serves the front end (web/). The graph,
// catalog and try-it APIs are http.Handlers of their own packages,
// mounted here behind the same security (Mount).
//
// Security: the server listens on loopback unless told otherwise; every
// request, event stream included, needs the run's random token (guard);
// the Host and Origin headers must name this server, which defeats DNS
// rebinding and cross-site requests; files are read and written only under
// the directories given on the command line (files).
package studio

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connectd/connectd/internal/editorschema"
	"github.com/connectd/connectd/internal/studio/web"
)

// Mount is an API mounted on Pattern (an http.ServeMux pattern such as
// "POST /api/graph"), behind the studio's security. Close, when set, is
// called when the studio stops (a try-it run is stopped then).
type Mount struct {
	Pattern string
	Handler http.Handler
	Close   func()
}

// Options configures a Server.
type Options struct {
	// Paths are the files and directories given on the command line: the
	// files are opened at start, and files are read and written only under
	// these directories (a file's directory for a file).
	Paths []string
	// Schema returns the binary's config schema (completion, hover, forms
	// and lint use it).
	Schema func() *service.ConfigSchema
	// Mounts are further APIs (graph, catalog, try-it).
	Mounts []Mount
}

// Server is the studio's HTTP handler before its security: New wraps it.
type Server struct {
	mux    *http.ServeMux
	files  *files
	linter *Linter
	schema func() *service.ConfigSchema

	schemaOnce sync.Once
	schemaGzip []byte
	schemaErr  error
}

// New returns the studio's handler for a server listening on addr, which
// accepts requests that carry token (see guard).
func New(opts Options, addr net.Addr, token string) (http.Handler, error) {
	f, err := newFiles(opts.Paths)
	if err != nil {
		return nil, err
	}
	s := &Server{mux: http.NewServeMux(), files: f, schema: opts.Schema}
	var schema *service.ConfigSchema
	if opts.Schema != nil {
		schema = opts.Schema()
	}
	s.linter = NewLinter(schema)
	s.mux.Handle("/api/file", f)
	s.mux.HandleFunc("/api/files", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, f.list())
	})
	s.mux.Handle("/api/lint", s.linter)
	s.mux.HandleFunc("/api/schema", s.serveSchema)
	for _, m := range opts.Mounts {
		s.mux.Handle(m.Pattern, m.Handler)
	}
	s.mux.Handle("/", web.Handler())
	return newGuard(token, addr, s.mux), nil
}

// serveSchema serves the JSON Schema of `connectd schema` (gzip: it is
// about 450 KB), generated once.
func (s *Server) serveSchema(w http.ResponseWriter, r *http.Request) {
	s.schemaOnce.Do(func() {
		if s.schema == nil {
			s.schemaErr = fmt.Errorf("studio: no config schema")
			return
		}
		data, err := editorschema.Generate(s.schema())
		if err != nil {
			s.schemaErr = err
			return
		}
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write(data)
		_ = zw.Close()
		s.schemaGzip = buf.Bytes()
	})
	if s.schemaErr != nil {
		writeError(w, http.StatusInternalServerError, s.schemaErr)
		return
	}
	w.Header().Set("Content-Type", "application/schema+json")
	w.Header().Set("Cache-Control", "no-store")
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(s.schemaGzip)
		return
	}
	zr, err := gzip.NewReader(bytes.NewReader(s.schemaGzip))
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(zr)
	_, _ = w.Write(buf.Bytes())
}
