// Package web holds the studio's front end: the source (src/, bundled by
// esbuild from the npm packages of package.json and package-lock.json),
// the committed bundle (dist/) and the page and style sheet (static/),
// embedded in the binary. `npm ci && npm run build` rebuilds dist/; a test
// of test/studio checks that the committed bundle is what that build gives
// (docs/studio.md).
package web

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static dist
var assets embed.FS

// Handler serves the page at / and its assets under /static/ and /dist/.
func Handler() http.Handler {
	files := http.FileServer(http.FS(assets))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		if r.URL.Path == "/" || r.URL.Path == "/index.html" {
			page, err := fs.ReadFile(assets, "static/index.html")
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(page)
			return
		}
		files.ServeHTTP(w, r)
	})
}
