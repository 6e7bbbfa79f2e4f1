package hms

import (
	"time"

	"github.com/deltasync/deltasync/catalog"
)

const DefaultName = "hive"

type KindOptions struct {
	Name             string
	Columns          Columns
	LockWait         time.Duration
	IgnoreProperties []string
	Now              func() time.Time
}
type Kind struct{ catalog.Kind }

func NewKind(c *Client, o KindOptions) *Kind { return &Kind{} }
