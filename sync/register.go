package sync

import (
	"context"
	"fmt"

	"github.com/deltasync/deltasync/catalog"
	"github.com/deltasync/deltasync/deltalog"
)

// Register creates the EXTERNAL table for the snapshot in k's catalog, in
// sync with the log (its watermark the snapshot's version), and returns
// the version the record holds.
func Register(ctx context.Context, k catalog.Kind, s *deltalog.Snapshot, name catalog.TableName, location string) (*int64, error) {
	w, err := k.Registration(name, location, LogStateOf(s, location))
	if err != nil {
		return nil, err
	}
	v, err := k.Register(ctx, w)
	if err != nil {
		return nil, fmt.Errorf("registering %s: %w", name, err)
	}
	return v, nil
}
