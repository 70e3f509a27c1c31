package studio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/urfave/cli/v2"
)

// DefaultAddress is where studio listens unless --address says otherwise:
// loopback, on a port the system picks.
const DefaultAddress = "127.0.0.1:0"

// Command is the `studio` subcommand. mainSchema returns the binary's
// config schema; mounts returns the further APIs (graph, catalog, try-it),
// given the check (Confine) that a file they read is under the allowed
// directories.
func Command(mainSchema func() *service.ConfigSchema, mounts func(allow func(path string) error) []Mount) *cli.Command {
	return &cli.Command{
		Name:      "studio",
		Usage:     "Edit, check, graph and try pipelines in a local web app (loopback, per-run token)",
		ArgsUsage: "[file-or-dir ...]",
		Description: `Serves the studio, embedded in the binary, and prints its URL with a
per-run access token; every request needs that token. Files are opened and
saved only under the directories given (the directory of a file given; the
working directory when none is given). docs/studio.md tells the rest.

  connectd studio config/quickstart.yaml
  connectd studio --address 127.0.0.1:4196 config/`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "address", Value: DefaultAddress, Usage: "host:port to listen on; a port of 0 lets the system pick one"},
			&cli.BoolFlag{Name: "allow-remote", Usage: "allow an --address that is not loopback (other hosts can then reach the studio, with the token)"},
		},
		Action: func(c *cli.Context) error {
			paths := c.Args().Slice()
			if len(paths) == 0 {
				paths = []string{"."}
			}
			var m []Mount
			if mounts != nil {
				allow, err := Confine(paths)
				if err != nil {
					return err
				}
				m = mounts(allow)
			}
			ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			return Serve(ctx, c.String("address"), c.Bool("allow-remote"), Options{Paths: paths, Schema: mainSchema, Mounts: m}, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// Serve listens on address, prints the studio's URL (with its token) on
// out, and serves until ctx ends. An address that is not loopback is
// refused unless allowRemote, and warned about on errOut when allowed.
func Serve(ctx context.Context, address string, allowRemote bool, opts Options, out, errOut io.Writer) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("studio: --address %q: %w", address, err)
	}
	loopback := host == "localhost"
	if ip := net.ParseIP(host); ip != nil {
		loopback = ip.IsLoopback()
	}
	if !loopback && !allowRemote {
		return fmt.Errorf("studio: --address %q is not a loopback address: other hosts could reach the studio and the files it serves; add --allow-remote to mean it", address)
	}
	ln, err := net.Listen("tcp", address)
	if err != nil {
		return fmt.Errorf("studio: --address %q: %w", address, err)
	}
	defer ln.Close()
	token, err := newToken()
	if err != nil {
		return err
	}
	h, err := New(opts, ln.Addr(), token)
	if err != nil {
		return err
	}
	defer func() {
		for _, m := range opts.Mounts {
			if m.Close != nil {
				m.Close()
			}
		}
	}()
	if !loopback {
		fmt.Fprintf(errOut, "connectd studio: WARNING: listening on %s, which is not loopback: anyone who can reach it and has the token can read and write the files under %v\n", ln.Addr(), opts.Paths)
	}
	fmt.Fprintf(out, "connectd studio: %s\n", URL(ln.Addr(), token))
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("studio: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	return nil
}

// URL is the address a user opens: the server's, with the token.
func URL(addr net.Addr, token string) string {
	host := addr.String()
	if tcp, ok := addr.(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		host = net.JoinHostPort("127.0.0.1", fmt.Sprint(tcp.Port))
	}
	return fmt.Sprintf("http://%s/?%s=%s", host, tokenParam, token)
}
