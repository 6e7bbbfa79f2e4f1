package main

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/deltasync/deltasync/deltalog"
)

// withTableRootHint adds what to pass instead when a table URL names the
// table's _delta_log directory rather than the table root (the directory
// that contains _delta_log): deltasync looks for _delta_log/ under the URL.
func withTableRootHint(rawURL string, err error) error {
	if !errors.Is(err, deltalog.ErrNotATable) {
		return err
	}
	p := rawURL
	if u, perr := url.Parse(rawURL); perr == nil && strings.Contains(rawURL, "://") {
		p = u.Path
	}
	if path.Base(strings.TrimRight(p, "/")) != "_delta_log" {
		return err
	}
	root := strings.TrimSuffix(strings.TrimRight(rawURL, "/"), "_delta_log")
	if u, perr := url.Parse(rawURL); perr == nil && u.RawQuery != "" {
		u.Path = strings.TrimSuffix(strings.TrimRight(u.Path, "/"), "_delta_log")
		root = u.String()
	}
	if root == "" {
		root = "."
	}
	return fmt.Errorf("%w\n%s names the _delta_log directory itself; pass the table's root, the directory that contains it: %s", err, rawURL, root)
}
