package uc

import (
	"context"

	"go.uber.org/zap"

	"github.com/deltasync/deltasync/catalog"
)

type KindOptions struct{ Logger *zap.Logger }
type Kind struct{ catalog.Kind }

func NewKind(c *Client, o KindOptions) *Kind { return &Kind{} }
func (k *Kind) ReadCredentials(ctx context.Context, rec catalog.Record) (catalog.Credentials, error) {
	panic("stub")
}

func RecordOf(name catalog.TableName, lt *LoadTableResponse, comment, storageLocation string) catalog.Record {
	panic("stub")
}
