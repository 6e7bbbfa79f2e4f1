//go:build nos3

package deltalog

import (
	"context"
	"errors"
	"net/url"

	"gocloud.dev/blob"
)

// s3Enabled reports whether this build includes the s3:// driver.
const s3Enabled = false

func openS3(context.Context, *url.URL, Credentials) (*blob.Bucket, error) {
	return nil, errors.New("s3:// support was left out of this build (tag nos3)")
}

func hintS3(func(any) bool, func(string) (string, bool)) bool { return false }
