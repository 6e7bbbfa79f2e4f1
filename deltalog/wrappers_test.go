package deltalog

import (
	"context"

	"gocloud.dev/blob"
)

// Short forms of the production readers for tests that call them on a bare
// bucket or bytes, without a Table or an observer.

// listLog is listLogPages with no observer.
func listLog(ctx context.Context, b *blob.Bucket, startAfter string) ([]*blob.ListObject, error) {
	return listLogPages(ctx, nil, b, "", startAfter, nil)
}

// readFile is readFileInto with no buffer to reuse.
func readFile(ctx context.Context, b *blob.Bucket, key string) ([]byte, error) {
	return readFileInto(ctx, b, key, nil)
}

// parseActions is parseLines keeping commitInfo.
func parseActions(data []byte) (*fileActions, error) {
	return parseLines(data, true)
}

// newReaderAt is a rangeReaderAt over the object at key on a bare bucket,
// with no observer; a negative size is fetched with a HEAD, as
// Table.readerAt does.
func newReaderAt(ctx context.Context, b *blob.Bucket, key string, size int64) (*rangeReaderAt, int64, error) {
	if size < 0 {
		attrs, err := b.Attributes(ctx, key)
		if err != nil {
			return nil, 0, err
		}
		size = attrs.Size
	}
	return &rangeReaderAt{ctx: ctx, b: b, key: key, size: size}, size, nil
}
