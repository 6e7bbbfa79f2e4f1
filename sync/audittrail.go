package sync

import "context"

// cycleOf returns the cycle ctx is tagged with (withCycle), or nil.
func cycleOf(ctx context.Context) *int64 {
	if c, ok := ctx.Value(cycleKey{}).(int64); ok {
		return &c
	}
	return nil
}
