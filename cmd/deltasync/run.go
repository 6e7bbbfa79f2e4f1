package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/deltasync/deltasync/sync"
)

// newRunCommand is the daemon: cycles on a schedule, serves /metrics,
// /healthz, /readyz and /, and on SIGTERM finishes the table in flight and
// exits cleanly.
func newRunCommand(c *cli) *cobra.Command {
	var f syncFlags
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the daemon: sync on a schedule and serve /metrics, /healthz, /readyz",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := c.loadConfig(cmd, &f)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			a, err := c.newDaemon(s)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			defer a.closeCatalog()
			defer a.rec.Close()
			defer a.audit.Close()
			defer a.closeNotify()
			applyMemoryLimit(a.log, cgroupRoot)
			return a.serve(cmd.Context(), nil)
		},
	}
	addSyncFlags(cmd, &f, "listen", "schedule", "http-token-file", "heartbeat-url", "events-url", "max-cycle-duration", "audit-file")
	return cmd
}

// handler is the daemon's HTTP mux.
func (a *app) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", a.metrics.Handler(a.registry, promhttp.HandlerOpts{Registry: a.registry}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		// The second line always says what the running (or last) cycle
		// has done, so a slow cycle is visible before it ends.
		p := a.rec.Progress()
		progress := p.String()
		if !a.rec.Ready() {
			http.Error(w, "not ready: no completed cycle with the catalog reachable yet\n"+progress, http.StatusServiceUnavailable)
			return
		}
		if limit := a.s.daemon.maxCycle; limit > 0 && p.Running && p.Age(time.Now()) > limit {
			http.Error(w, fmt.Sprintf("not ready: the running cycle has exceeded max_cycle_duration %s\n%s", limit, progress), http.StatusServiceUnavailable)
			return
		}
		if err := a.eventsReady(); err != nil {
			http.Error(w, "not ready: "+err.Error()+"\n"+progress, http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n" + progress + "\n"))
	})
	mux.Handle("GET /{$}", newStatusHandler(a.rec.Status))
	return mux
}

// serve runs the HTTP server and the cycle loop until ctx is done, then
// shuts the server down gracefully. If ready is non-nil it receives the
// listener address once the server listens (tests).
func (a *app) serve(ctx context.Context, ready chan<- net.Addr) error {
	d := a.s.daemon
	ln, err := net.Listen("tcp", d.listen)
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	if ready != nil {
		ready <- ln.Addr()
	}
	srv := &http.Server{Handler: guard(d.httpToken, a.handler()), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	a.log.Info("deltasync running", zap.String("listen", ln.Addr().String()), zap.String("schedule", d.scheduleSpec))

	stopEvents := a.startEvents(ctx)
	loopErr := sync.Loop(ctx, d.schedule, d.jitter, func(ctx context.Context) {
		defer releaseMemory()
		rep := a.rec.Sync(ctx)
		if unmatched := unmatchedRules(a.s, rep, false, ""); len(unmatched) > 0 {
			a.log.Warn("a table rule selected no table: check the catalog, schema and table names", zap.Strings("rules", unmatched))
		}
		for _, s := range refusedSelections(a.s, rep, false, "") {
			a.log.Warn(s)
		}
		if !rep.Failed() && !rep.Interrupted && a.s.heartbeatURL != "" {
			if err := pingHeartbeat(ctx, a.s.heartbeatURL); err != nil {
				a.log.Warn("heartbeat failed", zap.Error(err))
			}
		}
	})
	stopEvents()
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	err = srv.Shutdown(shutdownCtx)
	if serr := <-served; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	a.log.Info("deltasync stopped")
	return errors.Join(loopErr, err)
}
