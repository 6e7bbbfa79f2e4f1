//go:build nogcs

package deltalog

import (
	"context"
	"errors"
	"net/url"

	"gocloud.dev/blob"
)

// gcsEnabled reports whether this build includes the gs:// driver.
const gcsEnabled = false

func openGCS(context.Context, *url.URL, Credentials) (*blob.Bucket, error) {
	return nil, errors.New("gs:// support was left out of this build (tag nogcs)")
}

func hintGCS(func(any) bool, func(string) (string, bool)) bool { return false }
