package studio

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestStudioCatalog: the catalog pane lists the tables of
// config/table_orders.yaml with their columns, and a DDL syntax error shows
// in the pane and in the editor at its line and column in the YAML file.
func TestStudioCatalog(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join(repoRoot(), "config", "table_orders.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "table_orders.yaml")
	if err := os.WriteFile(file, src, 0o644); err != nil {
		t.Fatal(err)
	}
	s := startStudio(t, dir, file)
	if code, _ := postJSON(t, s, "/api/catalog", `{"yaml":"input: {}"}`); code == 404 {
		t.Skip("the catalog API (internal/studio/catalog) is not in this build")
	}
	run(t, ctx, chromedp.Navigate(s.URL))
	waitJS(t, ctx, 30*time.Second, `document.body.dataset.ready === "true"`, "")
	run(t, ctx, chromedp.Click(`.tabs button[data-tab="catalog"]`))
	waitJS(t, ctx, 10*time.Second, `document.querySelector('#catalog section.table[data-table="orders"]')`, `document.querySelector("#catalog").innerText`)
	cols := evalAs[string](t, ctx, `document.querySelector('#catalog section.table[data-table="orders"] table').innerText`)
	for _, want := range []string{"id", "BIGINT NOT NULL", "amount", "DECIMAL(10, 2)", "tags", "ARRAY<STRING>"} {
		if !strings.Contains(cols, want) {
			t.Fatalf("the orders table lacks %q:\n%s", want, cols)
		}
	}

	// A comma goes missing in the first DDL: the error is at the column
	// that follows, line and column in the YAML file.
	cursorAt(t, ctx, "amount DECIMAL(10, 2),\n            ts", len("amount DECIMAL(10, 2),"))
	run(t, ctx, press('\b'))
	text := doc(t, ctx)
	at := strings.Index(text, "amount DECIMAL(10, 2)\n            ts") + len("amount DECIMAL(10, 2)\n            ")
	line := 1 + strings.Count(text[:at], "\n")
	col := at - strings.LastIndex(text[:at], "\n")
	want := fmt.Sprintf("%d:%d ", line, col)
	waitJS(t, ctx, 10*time.Second, fmt.Sprintf(`[...document.querySelectorAll("#catalog .catalog-error")].some(e => e.textContent.startsWith(%q))`, want), `document.querySelector("#catalog").innerText`)
	// The editor marks it too, beside connectd lint's problem at the ddl field.
	waitJS(t, ctx, 10*time.Second, fmt.Sprintf(`%s.includes(%d)`, errorLinesJS, line), errorLinesJS)
	// Clicking the error jumps to it.
	run(t, ctx, chromedp.Click(`#catalog .catalog-error`))
	got := evalAs[[]int](t, ctx, `(() => { const v = studio.view, h = v.state.selection.main.head, l = v.state.doc.lineAt(h); return [l.number, h - l.from + 1]; })()`)
	if got[0] != line || got[1] != col {
		t.Fatalf("clicking the DDL error put the cursor at %v, want %d:%d", got, line, col)
	}
}
