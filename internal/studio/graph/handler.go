package graph

import (
	"encoding/json"
	"net/http"
	"os"

	"github.com/connectd/connectd/internal/studio/catalog"
)

// Options configure the graph handler.
type Options struct {
	// Dir resolves relative catalog paths of the tables that Kafka nodes
	// show: the studio's working directory ("" is the process's).
	Dir string
	// AllowFile, when set, vets a catalog file's absolute path before it
	// is read (catalog.Env.AllowFile).
	AllowFile func(path string) error
}

// Request is the body of POST /api/graph.
type Request struct {
	YAML string `json:"yaml"`
}

// Handler serves POST /api/graph (internal/studio/API.md).
func Handler(opts Options) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "use POST"})
			return
		}
		var req Request
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, catalog.MaxBody)).Decode(&req); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "request body: " + err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, Build([]byte(req.YAML), catalog.Env{Dir: opts.Dir, LookupEnv: os.LookupEnv, AllowFile: opts.AllowFile}))
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
