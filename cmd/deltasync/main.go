// Command deltasync keeps Unity Catalog's record of Delta tables true to each
// table's transaction log. See the README for the commands it offers.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// version is stamped at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// cli is what every subcommand gets: the process's streams and environment,
// so tests can run commands in-process without touching the real ones.
type cli struct {
	ctx    context.Context
	stdout io.Writer
	stderr io.Writer
	env    map[string]string
}

// getenv returns the value of an environment variable given to run.
func (c *cli) getenv(key string) string { return c.env[key] }

// exitError carries a process exit code other than 0 or 1 (for example 2,
// "drift found") out of a command. A plain error means exit 1.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// run is main without the process: it parses args, runs the command and
// returns the exit code.
func run(ctx context.Context, args, env []string, stdout, stderr io.Writer) int {
	c := &cli{ctx: ctx, stdout: stdout, stderr: stderr, env: envMap(env)}
	root := newRootCommand(c)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(stderr, "deltasync:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "deltasync:", err)
	return 1
}

// newRootCommand is the command tree: every command, and the hidden
// gen-docs that documents it.
func newRootCommand(c *cli) *cobra.Command {
	root := &cobra.Command{
		Use:           "deltasync",
		Short:         "Keep Unity Catalog true to each Delta table's transaction log",
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(
		newRunCommand(c),
		newOnceCommand(c),
		newPlanCommand(c),
		newApplyCommand(c),
		newInspectCmd(c),
		newCheckConfigCommand(c),
		newDemoCommand(c),
		newGenDocsCommand(c, func() *cobra.Command { return newRootCommand(c) }),
	)
	return root
}

func envMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		for i := 0; i < len(kv); i++ {
			if kv[i] == '=' {
				m[kv[:i]] = kv[i+1:]
				break
			}
		}
	}
	return m
}
