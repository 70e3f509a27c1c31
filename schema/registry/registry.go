// Package registry is a small client of the Confluent Schema Registry REST
// API (the subset that the avro-confluent format uses): fetch a schema by
// id, register a schema under a subject, look a schema up in a subject. It
// caches what it learns; ids and their schemas never change in a registry.
package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
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
	base     *url.URL // without user info
	user     string
	pass     string
	hasAuth  bool
	retries  int
	http     *http.Client
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
	c := &Client{retries: cfg.Retries, http: &http.Client{Timeout: cfg.Timeout, Transport: cfg.Transport}}
	if cfg.Timeout == 0 {
		c.http.Timeout = DefaultTimeout
	}
	if cfg.Retries == 0 {
		c.retries = DefaultRetries
	}
	switch {
	case cfg.UserInfo != "":
		user, pass, ok := strings.Cut(cfg.UserInfo, ":")
		if !ok {
			return nil, errors.New("schema registry: user info: want user:password")
		}
		c.user, c.pass, c.hasAuth = user, pass, true
	case u.User != nil:
		c.user = u.User.Username()
		c.pass, _ = u.User.Password()
		c.hasAuth = true
	}
	u.User = nil
	u.Path = strings.TrimRight(u.Path, "/")
	c.base = u
	c.redacted = u.String()
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
	var resp struct {
		Schema     string `json:"schema"`
		SchemaType string `json:"schemaType"`
	}
	if err := c.do(ctx, http.MethodGet, "/schemas/ids/"+strconv.Itoa(id), nil, &resp); err != nil {
		return Schema{}, err
	}
	s = Schema{Type: resp.SchemaType, Schema: resp.Schema}
	c.mu.Lock()
	c.mu.byID[id] = s
	c.mu.Unlock()
	return s, nil
}

// Register registers an Avro schema under subject (POST
// /subjects/{subject}/versions) and returns its id; the registry returns the
// existing id when the subject already has the schema.
func (c *Client) Register(ctx context.Context, subject, schema string) (int, error) {
	return c.subjectID(ctx, subject, schema, "/versions")
}

// Lookup returns the id of an Avro schema already registered under subject
// (POST /subjects/{subject}); ErrNotFound when it is not.
func (c *Client) Lookup(ctx context.Context, subject, schema string) (int, error) {
	return c.subjectID(ctx, subject, schema, "")
}

func (c *Client) subjectID(ctx context.Context, subject, schema, suffix string) (int, error) {
	key := subjectSchema{subject, schema}
	c.mu.Lock()
	id, ok := c.mu.bySubject[key]
	c.mu.Unlock()
	if ok {
		return id, nil
	}
	body, err := json.Marshal(map[string]string{"schema": schema})
	if err != nil {
		return 0, err
	}
	var resp struct {
		ID *int `json:"id"`
	}
	if err := c.do(ctx, http.MethodPost, "/subjects/"+url.PathEscape(subject)+suffix, body, &resp); err != nil {
		return 0, err
	}
	if resp.ID == nil {
		return 0, fmt.Errorf("schema registry POST %s/subjects/%s%s: the response has no id", c.redacted, subject, suffix)
	}
	c.mu.Lock()
	c.mu.bySubject[key] = *resp.ID
	c.mu.byID[*resp.ID] = Schema{Schema: schema}
	c.mu.Unlock()
	return *resp.ID, nil
}

// do sends one request, retrying 5xx statuses and transport errors, and
// decodes a 2xx JSON body into out.
func (c *Client) do(ctx context.Context, method, path string, body []byte, out any) error {
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
		retry, err := c.once(ctx, method, target, body, out)
		if err == nil {
			return nil
		}
		last = err
		if !retry || attempt >= c.retries || ctx.Err() != nil {
			return err
		}
	}
}

func (c *Client) once(ctx context.Context, method, target string, body []byte, out any) (retry bool, err error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return false, fmt.Errorf("schema registry %s %s: %w", method, target, err)
	}
	req.Header.Set("Accept", ContentType+", application/json")
	if body != nil {
		req.Header.Set("Content-Type", ContentType)
	}
	if c.hasAuth {
		req.SetBasicAuth(c.user, c.pass)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		// url.Error repeats the URL; it holds no credentials (c.base has none).
		return true, fmt.Errorf("schema registry %s %s: %w", method, target, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return true, fmt.Errorf("schema registry %s %s: reading the response: %w", method, target, err)
	}
	if resp.StatusCode/100 != 2 {
		e := &Error{Method: method, URL: target, Status: resp.StatusCode}
		var eb struct {
			Code    int    `json:"error_code"`
			Message string `json:"message"`
		}
		if json.Unmarshal(data, &eb) == nil {
			e.Code, e.Message = eb.Code, eb.Message
		}
		return resp.StatusCode >= 500, e
	}
	if err := json.Unmarshal(data, out); err != nil {
		return false, fmt.Errorf("schema registry %s %s: response: %w", method, target, err)
	}
	return false, nil
}
