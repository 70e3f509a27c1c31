package tryrun

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/connectd/connectd/internal/studio/catalog"
)

// StartResponse is the answer of POST /api/run.
type StartResponse struct {
	ID         string   `json:"id"`
	Target     string   `json:"target"`
	Brokers    []string `json:"brokers"`
	MetricsURL string   `json:"metrics_url"`
}

func (r *Runner) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/run", r.serveStart)
	mux.HandleFunc("GET /api/run", r.serveList)
	mux.HandleFunc("GET /api/run/{id}", r.serveSnapshot)
	mux.HandleFunc("GET /api/run/{id}/events", r.serveEvents)
	mux.HandleFunc("POST /api/run/{id}/stop", r.serveStop)
	mux.HandleFunc("POST /api/test", r.serveTest)
	return mux
}

// ServeHTTP serves the paths of internal/studio/API.md.
func (r *Runner) ServeHTTP(w http.ResponseWriter, req *http.Request) { r.mux.ServeHTTP(w, req) }

func decode(w http.ResponseWriter, req *http.Request, v any) bool {
	if err := json.NewDecoder(http.MaxBytesReader(w, req.Body, catalog.MaxBody)).Decode(v); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "request body: " + err.Error()})
		return false
	}
	return true
}

func (r *Runner) serveStart(w http.ResponseWriter, req *http.Request) {
	var body StartRequest
	if !decode(w, req, &body) {
		return
	}
	run, err := r.Start(body)
	var (
		real *RealBrokersError
		busy *BusyError
		bad  *RequestError
	)
	switch {
	case errors.As(err, &real):
		brokers := real.Brokers
		if brokers == nil {
			brokers = []string{}
		}
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": err.Error(), "brokers": brokers})
	case errors.As(err, &busy):
		writeJSON(w, http.StatusConflict, map[string]any{"error": err.Error(), "id": busy.ID})
	case errors.As(err, &bad):
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": err.Error()})
	case err != nil:
		writeJSON(w, http.StatusInternalServerError, map[string]any{"error": err.Error()})
	default:
		writeJSON(w, http.StatusCreated, StartResponse{ID: run.ID, Target: run.Target, Brokers: run.Brokers, MetricsURL: run.MetricsURL})
	}
}

// RunSummary is a run in GET /api/run.
type RunSummary struct {
	ID        string    `json:"id"`
	State     string    `json:"state"`
	Target    string    `json:"target"`
	StartedAt time.Time `json:"started_at"`
}

// List is the answer of GET /api/run: the kept runs, oldest first, and the
// one alive, for a page that reloads to follow it again.
type List struct {
	Active string       `json:"active,omitempty"`
	Runs   []RunSummary `json:"runs"`
}

// List returns the kept runs.
func (r *Runner) List() List {
	r.mu.Lock()
	l := List{Runs: []RunSummary{}}
	runs := make([]*Run, 0, len(r.mu.order))
	for _, id := range r.mu.order {
		runs = append(runs, r.mu.runs[id])
	}
	if r.mu.active != nil {
		l.Active = r.mu.active.ID
	}
	r.mu.Unlock()
	for _, run := range runs {
		s := run.Snapshot()
		l.Runs = append(l.Runs, RunSummary{ID: s.ID, State: s.State, Target: s.Target, StartedAt: s.StartedAt})
	}
	return l
}

func (r *Runner) serveList(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, r.List())
}

func (r *Runner) lookupRun(w http.ResponseWriter, req *http.Request) (*Run, bool) {
	id := req.PathValue("id")
	run, ok := r.Get(id)
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": fmt.Sprintf("no run %q", id)})
	}
	return run, ok
}

func (r *Runner) serveSnapshot(w http.ResponseWriter, req *http.Request) {
	if run, ok := r.lookupRun(w, req); ok {
		writeJSON(w, http.StatusOK, run.Snapshot())
	}
}

func (r *Runner) serveStop(w http.ResponseWriter, req *http.Request) {
	if run, ok := r.lookupRun(w, req); ok {
		r.Stop(run)
		writeJSON(w, http.StatusOK, run.Snapshot())
	}
}

// serveEvents streams the run's events as Server-Sent Events.
func (r *Runner) serveEvents(w http.ResponseWriter, req *http.Request) {
	run, ok := r.lookupRun(w, req)
	if !ok {
		return
	}
	// A ResponseController finds the Flusher through middleware that wraps
	// the writer (and implements Unwrap).
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	if err := rc.Flush(); err != nil {
		// Nothing was sent: the writer cannot flush at all.
		writeJSON(w, http.StatusInternalServerError, map[string]any{"error": "streaming is not supported by this connection: " + err.Error()})
		return
	}
	past, events, cancel := run.Subscribe()
	defer cancel()
	send := func(e Event) bool {
		data, err := json.Marshal(e.Data)
		if err != nil {
			return true
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.Name, data); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	for _, e := range past {
		if !send(e) {
			return
		}
	}
	for {
		select {
		case <-req.Context().Done():
			return
		case e, open := <-events:
			if !open || !send(e) {
				return
			}
		}
	}
}

func (r *Runner) serveTest(w http.ResponseWriter, req *http.Request) {
	var body TestRequest
	if !decode(w, req, &body) {
		return
	}
	res, err := r.Test(req.Context(), body.YAML)
	var bad *RequestError
	switch {
	case errors.As(err, &bad):
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": err.Error()})
	case err != nil:
		writeJSON(w, http.StatusInternalServerError, map[string]any{"error": err.Error()})
	default:
		writeJSON(w, http.StatusOK, res)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
