// Package registrytest is an in-process fake of the Confluent Schema
// Registry REST API, for tests: the subset that connectd and Confluent's
// serializers use (GET /schemas/ids/{id}, POST /subjects/{subject}/versions,
// POST /subjects/{subject}, GET /subjects/{subject}/versions/latest), with
// the registry's content type and error bodies.
package registrytest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/connectd/connectd/schema/compat"
	"github.com/connectd/connectd/schema/registry"
)

// Registry is a fake schema registry. Its URL is Server.URL.
type Registry struct {
	Server *httptest.Server

	mu struct {
		sync.Mutex
		userInfo  string           // basic auth that every request must send; "" = none
		strict    bool             // refuse (409) a schema other than the subject's latest
		ids       map[string]int   // schema text -> id
		schemas   map[int]string   // id -> schema text
		types     map[int]string   // id -> schemaType ("" = AVRO)
		subjects  map[string][]int // subject -> ids by version
		requests  map[string]int   // "METHOD path" -> count
		fail5xx   int              // the next n requests fail with 500
		postTypes map[string]int   // Content-Type of POSTs -> count
		// levels are the compatibility levels set with SetCompatibility
		// (subject "" is the global one); with none, the config and
		// compatibility endpoints answer 404, as a registry that lacks them.
		levels map[string]compat.Level
		// reasons: the compatibility check answers with messages
		// (verbose), as Confluent's registry does.
		reasons bool
	}
}

// New starts a fake registry; the caller closes it (Close).
func New() *Registry {
	r := &Registry{}
	r.mu.ids = map[string]int{}
	r.mu.schemas = map[int]string{}
	r.mu.types = map[int]string{}
	r.mu.subjects = map[string][]int{}
	r.mu.requests = map[string]int{}
	r.mu.postTypes = map[string]int{}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	return r
}

// Close stops the server.
func (r *Registry) Close() { r.Server.Close() }

// URL is the registry's base URL.
func (r *Registry) URL() string { return r.Server.URL }

// Requests returns how many requests were made with method and path, e.g.
// Requests("GET", "/schemas/ids/1").
func (r *Registry) Requests(method, path string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mu.requests[method+" "+path]
}

// TotalRequests returns the number of requests served.
func (r *Registry) TotalRequests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.mu.requests {
		n += c
	}
	return n
}

// PostContentTypes returns the Content-Type headers of the POST requests
// served, with their counts.
func (r *Registry) PostContentTypes() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int, len(r.mu.postTypes))
	for k, v := range r.mu.postTypes {
		out[k] = v
	}
	return out
}

// RequireAuth makes every request send basic auth `user:password` (else 401,
// error_code 401).
func (r *Registry) RequireAuth(userInfo string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.userInfo = userInfo
}

// RefuseChanges makes registering a schema other than the subject's latest
// fail with 409 (error_code 409), as a registry whose compatibility check
// rejects it.
func (r *Registry) RefuseChanges() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.strict = true
}

// SetCompatibility sets subject's compatibility level ("" sets the global
// one) and turns on GET /config/{subject}, GET /config and POST
// /compatibility/subjects/{subject}/versions[/latest]; registering then
// refuses (409) a schema that breaks the subject's level. With reasons, the
// check answers with messages naming the field, as Confluent's registry
// does with verbose=true; without, with none.
func (r *Registry) SetCompatibility(subject string, level compat.Level, reasons bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.levels == nil {
		r.mu.levels = map[string]compat.Level{}
	}
	r.mu.levels[subject] = level
	r.mu.reasons = reasons
}

// levelLocked is subject's level, or the global one; ok is false when no
// level was set at all.
func (r *Registry) levelLocked(subject string) (compat.Level, bool) {
	if r.mu.levels == nil {
		return "", false
	}
	if l, ok := r.mu.levels[subject]; ok {
		return l, true
	}
	if l, ok := r.mu.levels[""]; ok {
		return l, true
	}
	return compat.Backward, true
}

// checkLocked checks schema against subject's versions at its level.
func (r *Registry) checkLocked(subject, schema string, all bool) error {
	level, _ := r.levelLocked(subject)
	var versions []string
	for _, id := range r.mu.subjects[subject] {
		versions = append(versions, r.mu.schemas[id])
	}
	if !all && len(versions) > 1 && level != compat.None {
		// .../versions/latest: the latest only, at the non-transitive form.
		versions = versions[len(versions)-1:]
	}
	return compat.Check(level, schema, versions)
}

// Fail5xx makes the next n requests fail with HTTP 500.
func (r *Registry) Fail5xx(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.fail5xx = n
}

// Add registers a schema of type typ ("" for AVRO) under subject directly
// and returns its id.
func (r *Registry) Add(subject, typ, schema string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.addLocked(subject, typ, schema)
}

func (r *Registry) addLocked(subject, typ, schema string) int {
	id, ok := r.mu.ids[typ+"\x00"+schema]
	if !ok {
		id = len(r.mu.schemas) + 1
		r.mu.ids[typ+"\x00"+schema] = id
		r.mu.schemas[id] = schema
		r.mu.types[id] = typ
	}
	for _, v := range r.mu.subjects[subject] {
		if v == id {
			return id
		}
	}
	r.mu.subjects[subject] = append(r.mu.subjects[subject], id)
	return id
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", registry.ContentType)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status, code int, format string, args ...any) {
	writeJSON(w, status, map[string]any{"error_code": code, "message": fmt.Sprintf(format, args...)})
}

func (r *Registry) serve(w http.ResponseWriter, req *http.Request) {
	path := req.URL.EscapedPath()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.requests[req.Method+" "+path]++
	if r.mu.fail5xx > 0 {
		r.mu.fail5xx--
		writeError(w, http.StatusInternalServerError, 50001, "Error in the backend data store")
		return
	}
	if r.mu.userInfo != "" {
		user, pass, ok := req.BasicAuth()
		if !ok || user+":"+pass != r.mu.userInfo {
			writeError(w, http.StatusUnauthorized, 401, "Unauthorized")
			return
		}
	}
	if req.Method == http.MethodPost {
		ct := req.Header.Get("Content-Type")
		r.mu.postTypes[ct]++
		// The media types that Confluent's registry accepts.
		if ct != registry.ContentType && ct != "application/vnd.schemaregistry+json" && !strings.HasPrefix(ct, "application/json") && ct != "application/octet-stream" {
			writeError(w, http.StatusUnsupportedMediaType, 415, "HTTP 415 Unsupported Media Type: %q", ct)
			return
		}
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case req.Method == http.MethodGet && len(parts) == 3 && parts[0] == "schemas" && parts[1] == "ids":
		id, err := strconv.Atoi(parts[2])
		s, ok := r.mu.schemas[id]
		if err != nil || !ok {
			writeError(w, http.StatusNotFound, 40403, "Schema %s not found", parts[2])
			return
		}
		body := map[string]any{"schema": s}
		if t := r.mu.types[id]; t != "" {
			body["schemaType"] = t
		}
		writeJSON(w, http.StatusOK, body)
	case req.Method == http.MethodPost && len(parts) == 3 && parts[0] == "subjects" && parts[2] == "versions":
		subject, typ, schema, ok := r.readSchemaLocked(w, req, parts[1])
		if !ok {
			return
		}
		if _, ok := r.levelLocked(subject); ok && typ == "" {
			if err := r.checkLocked(subject, schema, true); err != nil {
				writeError(w, http.StatusConflict, 409, "Schema being registered is incompatible with an earlier schema for subject %q, details: %v", subject, err)
				return
			}
		}
		if vs := r.mu.subjects[subject]; r.mu.strict && len(vs) > 0 && r.mu.schemas[vs[len(vs)-1]] != schema {
			if _, exists := r.mu.ids[typ+"\x00"+schema]; !exists || !contains(vs, r.mu.ids[typ+"\x00"+schema]) {
				writeError(w, http.StatusConflict, 409, "Schema being registered is incompatible with an earlier schema for subject %q", subject)
				return
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"id": r.addLocked(subject, typ, schema)})
	case req.Method == http.MethodPost && len(parts) == 2 && parts[0] == "subjects":
		subject, typ, schema, ok := r.readSchemaLocked(w, req, parts[1])
		if !ok {
			return
		}
		vs, found := r.mu.subjects[subject]
		if !found {
			writeError(w, http.StatusNotFound, 40401, "Subject '%s' not found.", subject)
			return
		}
		id, exists := r.mu.ids[typ+"\x00"+schema]
		for i, v := range vs {
			if exists && v == id {
				writeJSON(w, http.StatusOK, map[string]any{"subject": subject, "id": id, "version": i + 1, "schema": schema})
				return
			}
		}
		writeError(w, http.StatusNotFound, 40403, "Schema not found")
	case req.Method == http.MethodGet && len(parts) == 3 && parts[0] == "subjects" && parts[2] == "versions":
		subject := unescape(parts[1])
		vs := r.mu.subjects[subject]
		if len(vs) == 0 {
			writeError(w, http.StatusNotFound, 40401, "Subject '%s' not found.", subject)
			return
		}
		versions := make([]int, len(vs))
		for i := range vs {
			versions[i] = i + 1
		}
		writeJSON(w, http.StatusOK, versions)
	case req.Method == http.MethodGet && len(parts) == 4 && parts[0] == "subjects" && parts[2] == "versions":
		subject := unescape(parts[1])
		vs := r.mu.subjects[subject]
		if len(vs) == 0 {
			writeError(w, http.StatusNotFound, 40401, "Subject '%s' not found.", subject)
			return
		}
		v := len(vs)
		if parts[3] != "latest" {
			n, err := strconv.Atoi(parts[3])
			if err != nil || n < 1 || n > len(vs) {
				writeError(w, http.StatusNotFound, 40402, "Version %s not found.", parts[3])
				return
			}
			v = n
		}
		id := vs[v-1]
		writeJSON(w, http.StatusOK, map[string]any{"subject": subject, "id": id, "version": v, "schema": r.mu.schemas[id]})
	case req.Method == http.MethodGet && r.mu.levels != nil && (len(parts) == 1 || len(parts) == 2) && parts[0] == "config":
		subject := ""
		if len(parts) == 2 {
			subject = unescape(parts[1])
		}
		l, ok := r.mu.levels[subject]
		if !ok && (subject == "" || req.URL.Query().Get("defaultToGlobal") == "true") {
			l, ok = r.levelLocked(subject)
		}
		if !ok {
			writeError(w, http.StatusNotFound, 40408, "Subject '%s' does not have subject-level compatibility configured", subject)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"compatibilityLevel": string(l)})
	case req.Method == http.MethodPost && r.mu.levels != nil && (len(parts) == 4 || len(parts) == 5) && parts[0] == "compatibility" && parts[1] == "subjects" && parts[3] == "versions":
		subject, _, schema, ok := r.readSchemaLocked(w, req, parts[2])
		if !ok {
			return
		}
		if len(parts) == 5 && parts[4] != "latest" {
			writeError(w, http.StatusNotFound, 40402, "Version %s not found", parts[4])
			return
		}
		if len(r.mu.subjects[subject]) == 0 {
			writeError(w, http.StatusNotFound, 40401, "Subject '%s' not found.", subject)
			return
		}
		err := r.checkLocked(subject, schema, len(parts) == 4)
		body := map[string]any{"is_compatible": err == nil}
		if err != nil && r.mu.reasons {
			body["messages"] = []string{err.Error()}
		}
		writeJSON(w, http.StatusOK, body)
	default:
		writeError(w, http.StatusNotFound, 404, "HTTP 404 Not Found: %s %s", req.Method, path)
	}
}

func contains(ids []int, id int) bool {
	for _, v := range ids {
		if v == id {
			return true
		}
	}
	return false
}

func unescape(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

func (r *Registry) readSchemaLocked(w http.ResponseWriter, req *http.Request, rawSubject string) (subject, typ, schema string, ok bool) {
	subject = unescape(rawSubject)
	var body struct {
		Schema     string `json:"schema"`
		SchemaType string `json:"schemaType"`
	}
	if err := json.NewDecoder(req.Body).Decode(&body); err != nil || body.Schema == "" {
		writeError(w, http.StatusUnprocessableEntity, 42201, "Invalid schema: the body must be {\"schema\": \"...\"}")
		return "", "", "", false
	}
	if body.SchemaType == "AVRO" {
		body.SchemaType = ""
	}
	var probe any
	if body.SchemaType == "" && json.Unmarshal([]byte(body.Schema), &probe) != nil {
		writeError(w, http.StatusUnprocessableEntity, 42201, "Invalid schema: not JSON")
		return "", "", "", false
	}
	return subject, body.SchemaType, body.Schema, true
}
