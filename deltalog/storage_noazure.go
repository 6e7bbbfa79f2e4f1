//go:build noazure

package deltalog

import (
	"context"
	"errors"
	"net/url"

	"gocloud.dev/blob"
)

// azureEnabled reports whether this build includes the azblob:// driver.
const azureEnabled = false

func openAzure(context.Context, *url.URL, Credentials) (*blob.Bucket, error) {
	return nil, errors.New("azblob:// support was left out of this build (tag noazure)")
}

func hintAzure(func(any) bool, func(string) (string, bool)) bool { return false }
