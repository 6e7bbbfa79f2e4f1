//go:build !noazure

package deltalog

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"gocloud.dev/blob"
	"gocloud.dev/blob/azureblob"
)

// azureEnabled reports whether this build includes the azblob:// driver.
const azureEnabled = true

// openAzure opens the container of an azblob:// URL. Without a vended SAS
// token the gocloud URL opener (AZURE_STORAGE_* environment, then default
// Azure credentials) is used. With one, the container client is built here:
// the URL must name the account (storage_account=); domain=, protocol=,
// localemu= and cdn= are honoured as by the gocloud opener.
func openAzure(ctx context.Context, u *url.URL, c Credentials) (*blob.Bucket, error) {
	if c.AzureSASToken == "" {
		// The gocloud opener makes a container client, with a credential
		// of its own (default Azure credentials fetch their own token), per
		// bucket it opens. Tables of one container share the first one's.
		bucketURL := &url.URL{Scheme: u.Scheme, Host: u.Host, RawQuery: u.RawQuery}
		client, err := azureContainers.get(bucketURL.String(), func() (*container.Client, error) {
			b, err := blob.OpenBucket(ctx, bucketURL.String())
			if err != nil {
				return nil, err
			}
			defer b.Close() // its client lives on, shared
			var c *container.Client
			if !b.As(&c) {
				return nil, errors.New("azblob bucket exposes no container client")
			}
			return c, nil
		})
		if err != nil {
			return nil, err
		}
		return azureblob.OpenBucket(ctx, client, nil)
	}
	so := azureblob.ServiceURLOptions{SASToken: strings.TrimPrefix(c.AzureSASToken, "?")}
	for key, vals := range u.Query() {
		v := vals[0]
		var err error
		switch key {
		case "storage_account":
			so.AccountName = v
		case "domain":
			so.StorageDomain = v
		case "protocol":
			so.Protocol = v
		case "localemu":
			so.IsLocalEmulator, err = strconv.ParseBool(v)
		case "cdn":
			so.IsCDN, err = strconv.ParseBool(v)
		default:
			return nil, fmt.Errorf("unknown azblob URL parameter %q", key)
		}
		if err != nil {
			return nil, fmt.Errorf("invalid value %q for %s", v, key)
		}
	}
	if so.AccountName == "" {
		return nil, errors.New("azblob URL needs storage_account= when using vended credentials")
	}
	svc, err := azureblob.NewServiceURL(&so)
	if err != nil {
		return nil, err
	}
	containerURL, err := containerURLWithSAS(string(svc), u.Host)
	if err != nil {
		return nil, err
	}
	client, err := container.NewClientWithNoCredential(containerURL, nil)
	if err != nil {
		return nil, err
	}
	return azureblob.OpenBucket(ctx, client, nil)
}

// azureContainers are the shared container clients of the tables opened
// with ambient credentials, by container URL.
var azureContainers sharedClients[*container.Client]

// containerURLWithSAS appends the container name to the service URL path,
// keeping the SAS query.
func containerURLWithSAS(serviceURL, containerName string) (string, error) {
	su, err := url.Parse(serviceURL)
	if err != nil {
		return "", err
	}
	su.Path = strings.TrimSuffix(su.Path, "/") + "/" + containerName
	return su.String(), nil
}

// hintAzure sets StartFrom (inclusive; honoured from azblob v1.8.3) on an
// Azure hierarchy listing.
func hintAzure(as func(any) bool, full func(string) (string, bool)) bool {
	var o *container.ListBlobsHierarchyOptions
	if !as(&o) || o == nil {
		return false
	}
	if o.Prefix != nil {
		if k, ok := full(*o.Prefix); ok {
			o.StartFrom = &k
		}
	}
	return true
}
