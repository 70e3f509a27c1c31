// Package registry is the Confluent Schema Registry client of the
// avro-confluent formats: fetch a schema by id, register a schema under a
// subject, look a schema up in a subject, and check a schema against a
// subject's compatibility level before registering it. The requests go
// through franz-go's pkg/sr; this package adds what the formats need on top:
// a cache of what it learns (ids and their schemas never change in a
// registry), retries of 5xx answers and transport errors with a back-off
// that honours the context, errors that never carry credentials, and
// sentinels by HTTP status.
package registry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
)

// ContentType is the media type of the registry's requests and responses.
const ContentType = "application/vnd.schemaregistry.v1+json"

// Defaults of Config.
const (
	DefaultTimeout = 10 * time.Second
	DefaultRetries = 2
	retryBackoff   = 100 * time.Millisecond
)

// Sentinels that *Error matches with errors.Is, by HTTP status.
var (
	ErrUnauthorized = errors.New("schema registry: unauthorized")              // 401, 403
	ErrNotFound     = errors.New("schema registry: not found")                 // 404
	ErrIncompatible = errors.New("schema registry: incompatible schema")       // 409
	ErrInvalid      = errors.New("schema registry: invalid schema or request") // 422
)

// Error is an error response of the registry.
type Error struct {
	Method string
	URL    string // without credentials
	Status int
	// Code and Message are the registry's error_code and message, when the
	// body carried them.
	Code    int
	Message string
}

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	return fmt.Sprintf("schema registry %s %s: HTTP %d, error_code %d: %s", e.Method, e.URL, e.Status, e.Code, msg)
}

// Is matches the sentinel of the status.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrUnauthorized:
		return e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden
	case ErrNotFound:
		return e.Status == http.StatusNotFound
	case ErrIncompatible:
		return e.Status == http.StatusConflict
	case ErrInvalid:
		return e.Status == http.StatusUnprocessableEntity
	}
	return false
}

// Config configures a Client.
type Config struct {
	// URL is the registry's base URL, e.g. http://localhost:8081. Credentials
	// in it (http://user:pass@host) are used for basic auth unless UserInfo
	// is set; they never appear in errors. Required.
	URL string
	// UserInfo is `user:password` for HTTP basic auth. Default: none.
	UserInfo string
	// Timeout bounds one HTTP request. Default DefaultTimeout.
	Timeout time.Duration
	// Retries is how many times a request that failed with a 5xx status or a
	// transport error is tried again. Default DefaultRetries; negative: none.
	Retries int
	// Transport is the HTTP transport. Default http.DefaultTransport.
	Transport http.RoundTripper
}

// Client talks to one registry. It is safe for concurrent use.
type Client struct {
	sr       *sr.Client
	retries  int
	redacted string

	mu struct {
		sync.Mutex
		byID      map[int]Schema
		bySubject map[subjectSchema]int
	}
}

type subjectSchema struct{ subject, schema string }

// Schema is a schema as the registry returns it.
type Schema struct {
	// Type is the registry's schemaType; empty means AVRO.
	Type   string
	Schema string
}

// New returns a client; it does not contact the registry.
func New(cfg Config) (*Client, error) {
	if cfg.URL == "" {
		return nil, errors.New("schema registry: no URL")
	}
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("schema registry: URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("schema registry: URL %q: want http:// or https:// and a host", redact(u))
	}
	hc := &http.Client{Timeout: cfg.Timeout, Transport: cfg.Transport}
	if cfg.Timeout == 0 {
		hc.Timeout = DefaultTimeout
	}
	c := &Client{retries: cfg.Retries}
	if cfg.Retries == 0 {
		c.retries = DefaultRetries
	}
	opts := []sr.ClientOpt{sr.HTTPClient(hc), sr.UserAgent("connectd")}
	switch {
	case cfg.UserInfo != "":
		user, pass, ok := strings.Cut(cfg.UserInfo, ":")
		if !ok {
			return nil, errors.New("schema registry: user info: want user:password")
		}
		opts = append(opts, sr.BasicAuth(user, pass))
	case u.User != nil:
		pass, _ := u.User.Password()
		opts = append(opts, sr.BasicAuth(u.User.Username(), pass))
	}
	u.User = nil
	u.Path = strings.TrimRight(u.Path, "/")
	c.redacted = u.String()
	if c.sr, err = sr.NewClient(append(opts, sr.URLs(c.redacted))...); err != nil {
		return nil, fmt.Errorf("schema registry: %w", err)
	}
	c.mu.byID = map[int]Schema{}
	c.mu.bySubject = map[subjectSchema]int{}
	return c, nil
}

func redact(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}

// URL returns the base URL without credentials.
func (c *Client) URL() string { return c.redacted }

// SchemaByID returns the schema with the id (GET /schemas/ids/{id}), from the
// cache when it was fetched before.
func (c *Client) SchemaByID(ctx context.Context, id int) (Schema, error) {
	c.mu.Lock()
	s, ok := c.mu.byID[id]
	c.mu.Unlock()
	if ok {
		return s, nil
	}
	var got sr.Schema
	err := c.do(ctx, http.MethodGet, "/schemas/ids/"+strconv.Itoa(id), func(ctx context.Context) (err error) {
		got, err = c.sr.SchemaByID(ctx, id)
		return err
	})
	if err != nil {
		return Schema{}, err
	}
	s = Schema{Schema: got.Schema}
	if got.Type != sr.TypeAvro {
		s.Type = got.Type.String()
	}
	c.mu.Lock()
	c.mu.byID[id] = s
	c.mu.Unlock()
	return s, nil
}

// Register registers an Avro schema under subject (POST
// /subjects/{subject}/versions) and returns its id; the registry returns the
// existing id when the subject already has the schema.
func (c *Client) Register(ctx context.Context, subject, schema string) (int, error) {
	return c.subjectID(ctx, subject, schema, "/versions", func(ctx context.Context, subject string, s sr.Schema) (int, error) {
		return c.sr.RegisterSchema(ctx, subject, s, -1, -1)
	})
}

// Lookup returns the id of an Avro schema already registered under subject
// (POST /subjects/{subject}); ErrNotFound when it is not.
func (c *Client) Lookup(ctx context.Context, subject, schema string) (int, error) {
	return c.subjectID(ctx, subject, schema, "", func(ctx context.Context, subject string, s sr.Schema) (int, error) {
		got, err := c.sr.LookupSchema(ctx, subject, s)
		return got.ID, err
	})
}

func (c *Client) subjectID(ctx context.Context, subject, schema, suffix string,
	call func(context.Context, string, sr.Schema) (int, error),
) (int, error) {
	key := subjectSchema{subject, schema}
	c.mu.Lock()
	id, ok := c.mu.bySubject[key]
	c.mu.Unlock()
	if ok {
		return id, nil
	}
	err := c.do(ctx, http.MethodPost, "/subjects/"+url.PathEscape(subject)+suffix, func(ctx context.Context) (err error) {
		id, err = call(ctx, subject, sr.Schema{Schema: schema})
		return err
	})
	if err != nil {
		return 0, err
	}
	if id == 0 {
		return 0, fmt.Errorf("schema registry POST %s/subjects/%s%s: the response has no id", c.redacted, subject, suffix)
	}
	c.mu.Lock()
	c.mu.bySubject[key] = id
	c.mu.byID[id] = Schema{Schema: schema}
	c.mu.Unlock()
	return id, nil
}

// do makes one call of pkg/sr, retrying 5xx answers and transport errors,
// and turns its errors into this package's: an *Error for an answer, the
// method and URL (without credentials) in front of the rest.
func (c *Client) do(ctx context.Context, method, path string, call func(context.Context) error) error {
	target := c.redacted + path
	var last error
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			t := time.NewTimer(time.Duration(attempt) * retryBackoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return fmt.Errorf("schema registry %s %s: %w (last error: %w)", method, target, ctx.Err(), last)
			case <-t.C:
			}
		}
		err := call(ctx)
		if err == nil {
			return nil
		}
		retry := true
		var re *sr.ResponseError
		if errors.As(err, &re) {
			e := &Error{Method: method, URL: target, Status: re.StatusCode, Code: re.ErrorCode, Message: re.Message}
			retry, err = re.StatusCode >= 500, e
		} else {
			err = fmt.Errorf("schema registry %s %s: %w", method, target, err)
		}
		last = err
		if !retry || attempt >= c.retries || ctx.Err() != nil {
			return err
		}
	}
}

// Verdict is the registry's answer to a compatibility check.
type Verdict struct {
	// Level is the subject's compatibility level (the global one when the
	// subject has none).
	Level string
	// Compatible reports whether the schema may be registered; true when
	// the subject has no version yet or the level is NONE.
	Compatible bool
	// Messages are the registry's reasons (verbose=true), which name the
	// field that breaks compatibility.
	Messages []string
}

// CheckCompatibility asks the registry whether an Avro schema may be
// registered under subject at the subject's compatibility level (GET
// /config/{subject}?defaultToGlobal=true, then POST
// /compatibility/subjects/{subject}/versions/latest?verbose=true, or
// .../versions for the _TRANSITIVE levels, which check every version).
func (c *Client) CheckCompatibility(ctx context.Context, subject, schema string) (Verdict, error) {
	level, err := c.Level(ctx, subject)
	if err != nil {
		return Verdict{}, err
	}
	v := Verdict{Level: level}
	if level == sr.CompatNone.String() {
		v.Compatible = true
		return v, nil
	}
	version, path := -1, "/compatibility/subjects/"+url.PathEscape(subject)+"/versions/latest"
	if strings.HasSuffix(v.Level, "_TRANSITIVE") {
		version, path = -2, "/compatibility/subjects/"+url.PathEscape(subject)+"/versions"
	}
	var res sr.CheckCompatibilityResult
	err = c.do(ctx, http.MethodPost, path, func(ctx context.Context) (err error) {
		res, err = c.sr.CheckCompatibility(sr.WithParams(ctx, sr.Verbose), subject, version, sr.Schema{Schema: schema})
		return err
	})
	if errors.Is(err, ErrNotFound) {
		// No version yet (40401 subject not found, 40402 version not
		// found): the first version is compatible with nothing to check.
		v.Compatible = true
		return v, nil
	}
	if err != nil {
		return Verdict{}, err
	}
	v.Compatible, v.Messages = res.Is, res.Messages
	return v, nil
}

// Level returns subject's compatibility level, or the global one when the
// subject has none (GET /config/{subject}?defaultToGlobal=true).
func (c *Client) Level(ctx context.Context, subject string) (string, error) {
	var level sr.CompatibilityResult
	err := c.do(ctx, http.MethodGet, "/config/"+url.PathEscape(subject), func(ctx context.Context) error {
		level = c.sr.Compatibility(sr.WithParams(ctx, sr.DefaultToGlobal), subject)[0]
		return level.Err
	})
	if errors.Is(err, ErrNotFound) {
		// A registry without a subject config answers 404 (40408) where
		// another would fall back to the global level: ask for that.
		err = c.do(ctx, http.MethodGet, "/config", func(ctx context.Context) error {
			level = c.sr.Compatibility(ctx)[0]
			return level.Err
		})
	}
	if err != nil {
		return "", err
	}
	return level.Level.String(), nil
}

// Schemas returns the Avro schemas registered under subject, oldest first
// (GET /subjects/{subject}/versions, then each version); none when the
// subject does not exist.
func (c *Client) Schemas(ctx context.Context, subject string) ([]string, error) {
	var all []sr.SubjectSchema
	err := c.do(ctx, http.MethodGet, "/subjects/"+url.PathEscape(subject)+"/versions", func(ctx context.Context) (err error) {
		all, err = c.sr.Schemas(ctx, subject)
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(all))
	for _, s := range all {
		out = append(out, s.Schema.Schema)
	}
	return out, nil
}
