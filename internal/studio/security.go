package studio

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// TokenHeader carries the run's access token on API requests made outside
// the page (scripts, tests); the page itself sends the cookie.
const TokenHeader = "X-Connectd-Studio-Token"

// tokenParam is the query parameter of the URL studio prints.
const tokenParam = "token"

// newToken returns a random 128-bit access token, hex encoded.
func newToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("studio: making the access token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// guard is the security in front of every handler of the studio, the
// mounted graph, catalog and try-it handlers included:
//
//  1. the Host header must name the address the server is bound to, so a
//     page of another site whose DNS name was rebound to 127.0.0.1 is
//     refused (403) before anything runs;
//  2. an Origin header, when the browser sends one, must be this server's
//     own origin, so another site cannot post to the API (CSRF) nor open
//     its event streams (403);
//  3. the run's token must come with the request: in the TokenHeader
//     header, in the cookie the first page load sets, or in the URL's
//     token parameter (the URL studio prints); without it, 401 and the
//     request reaches no handler.
type guard struct {
	token  string
	port   string
	cookie string
	// loopback: the server listens on a loopback address; then only
	// loopback names are accepted in Host. Otherwise (--allow-remote) an IP
	// literal with the server's port is accepted too: DNS rebinding needs a
	// name, and an IP literal cannot be rebound.
	loopback bool
	next     http.Handler
}

func newGuard(token string, addr net.Addr, next http.Handler) *guard {
	tcp, _ := addr.(*net.TCPAddr)
	g := &guard{token: token, next: next}
	if tcp != nil {
		g.port = strconv.Itoa(tcp.Port)
		g.loopback = tcp.IP.IsLoopback()
	}
	// Cookies are not told apart by port: two studios on one host keep
	// their tokens under different names.
	g.cookie = "connectd_studio_" + g.port
	return g
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.hostAllowed(r.Host) {
		http.Error(w, fmt.Sprintf("connectd studio: Host %q is not this server's address (a DNS rebinding attempt?); open the URL connectd studio printed", r.Host), http.StatusForbidden)
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !g.originAllowed(o, r.Host) {
		http.Error(w, fmt.Sprintf("connectd studio: requests from origin %q are refused (cross-site)", o), http.StatusForbidden)
		return
	}
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		http.Error(w, "connectd studio: cross-site requests are refused", http.StatusForbidden)
		return
	}
	fromURL := g.equal(r.URL.Query().Get(tokenParam))
	if !fromURL && !g.equal(r.Header.Get(TokenHeader)) && !g.cookieOK(r) {
		w.Header().Set("Cache-Control", "no-store")
		http.Error(w, "connectd studio: this request needs the access token: open the URL that `connectd studio` printed (it carries ?token=...)", http.StatusUnauthorized)
		return
	}
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	if fromURL {
		http.SetCookie(w, &http.Cookie{
			Name: g.cookie, Value: g.token, Path: "/",
			HttpOnly: true, SameSite: http.SameSiteStrictMode,
		})
		// The page is loaded again without the token in its address, so
		// that it stays out of the history and of Referer headers.
		if r.Method == http.MethodGet && r.URL.Path == "/" {
			q := r.URL.Query()
			q.Del(tokenParam)
			u := url.URL{Path: "/", RawQuery: q.Encode()}
			http.Redirect(w, r, u.String(), http.StatusSeeOther)
			return
		}
	}
	g.next.ServeHTTP(w, r)
}

func (g *guard) equal(s string) bool {
	return s != "" && subtle.ConstantTimeCompare([]byte(s), []byte(g.token)) == 1
}

func (g *guard) cookieOK(r *http.Request) bool {
	c, err := r.Cookie(g.cookie)
	return err == nil && g.equal(c.Value)
}

// hostAllowed reports whether host (the request's Host header) names this
// server: a loopback name or address with the server's port, or, on a
// non-loopback bind, any IP literal with that port.
func (g *guard) hostAllowed(host string) bool {
	h, p, err := net.SplitHostPort(host)
	if err != nil || p != g.port {
		return false
	}
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	if ip == nil {
		return false
	}
	return ip.IsLoopback() || !g.loopback
}

// originAllowed reports whether origin is this server's own: http, and the
// same host and port as the (already checked) Host header.
func (g *guard) originAllowed(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Scheme != "http" || u.Path != "" && u.Path != "/" {
		return false
	}
	return strings.EqualFold(u.Host, host)
}
