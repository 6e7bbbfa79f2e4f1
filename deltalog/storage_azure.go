//go:build !noazure

package deltalog

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	stdsync "sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"gocloud.dev/blob"
	"gocloud.dev/blob/azureblob"
)

// azureEnabled reports whether this build includes the azblob:// driver.
const azureEnabled = true

// openAzure opens the container of an azblob:// URL. Without a vended SAS
// token the container client is made from the AZURE_STORAGE_* environment
// (a shared key, then a connection string, then default Azure
// credentials) as the gocloud URL opener makes it; with
// AZURE_STORAGE_SAS_TOKEN set the gocloud opener itself is used, since it
// also refuses URL parameters that would send that token to another
// endpoint. With a vended token the container client is built here: the
// URL must name the account (storage_account=); domain=, protocol=,
// localemu= and cdn= are honoured as by the gocloud opener. Every client
// made here sends through azureHTTPClient.
func openAzure(ctx context.Context, u *url.URL, c Credentials) (*blob.Bucket, error) {
	if c.AzureSASToken == "" {
		// The gocloud opener makes a container client, with a credential
		// of its own (default Azure credentials fetch their own token), per
		// bucket it opens. Tables of one container share the first one's.
		bucketURL := &url.URL{Scheme: u.Scheme, Host: u.Host, RawQuery: u.RawQuery}
		client, err := azureContainers.get(bucketURL.String(), func() (*container.Client, error) {
			var b *blob.Bucket
			var err error
			if os.Getenv("AZURE_STORAGE_SAS_TOKEN") != "" {
				b, err = blob.OpenBucket(ctx, bucketURL.String())
			} else {
				opener := &azureblob.URLOpener{MakeClient: newAzureAmbientClient, ServiceURLOptions: *azureblob.NewDefaultServiceURLOptions()}
				b, err = opener.OpenBucketURL(ctx, bucketURL)
			}
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
	client, err := container.NewClientWithNoCredential(containerURL, azureClientOptions())
	if err != nil {
		return nil, err
	}
	return azureblob.OpenBucket(ctx, client, nil)
}

// newAzureAmbientClient makes the client of a container from the
// AZURE_STORAGE_* environment, choosing the credential as the gocloud
// opener does (AZURE_STORAGE_SAS_TOKEN aside, see openAzure), with
// azureHTTPClient as its transport.
func newAzureAmbientClient(svcURL azureblob.ServiceURL, name azureblob.ContainerName) (*container.Client, error) {
	containerURL, err := url.JoinPath(string(svcURL), string(name))
	if err != nil {
		return nil, err
	}
	account, key := os.Getenv("AZURE_STORAGE_ACCOUNT"), os.Getenv("AZURE_STORAGE_KEY")
	connStr := os.Getenv("AZURE_STORAGE_CONNECTION_STRING")
	if connStr == "" {
		connStr = os.Getenv("AZURE_STORAGEBLOB_CONNECTIONSTRING")
	}
	switch {
	case account != "" && key != "":
		cred, err := azblob.NewSharedKeyCredential(account, key)
		if err != nil {
			return nil, fmt.Errorf("AZURE_STORAGE_KEY: %w", err)
		}
		return container.NewClientWithSharedKeyCredential(containerURL, cred, azureClientOptions())
	case connStr != "":
		return container.NewClientFromConnectionString(connStr, string(name), azureClientOptions())
	default:
		cred, err := azidentity.NewDefaultAzureCredential(nil)
		if err != nil {
			return nil, fmt.Errorf("default Azure credentials: %w", err)
		}
		return container.NewClient(containerURL, cred, azureClientOptions())
	}
}

// azureHTTPClient is the HTTP client of every container client made here.
// Azure Storage speaks HTTP/1.1 only, and the Azure SDK's default
// transport keeps 10 idle connections per host, so each Load (up to
// prefetchMax GETs in flight) closed the connections above 10 and dialled
// them again, with a TLS handshake each: 110-121 connections over five
// Loads of a table with 44 commits to read, at most 48 with this client
// (TestAzureLoadReusesConnections). Its TLS settings are the SDK
// default transport's.
var azureHTTPClient = stdsync.OnceValue(func() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, Renegotiation: tls.RenegotiateFreelyAsClient}
	keepFetchConns(tr)
	return &http.Client{Transport: tr}
})

// azureClientOptions are the options of every container client made here.
func azureClientOptions() *container.ClientOptions {
	return &container.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: azureHTTPClient(),
		Retry: policy.RetryOptions{ShouldRetry: azureShouldRetry}}}
}

// azureShouldRetry is the SDK's retry predicate (its default status codes,
// and transport errors) less throttling: a 503 ServerBusy or 500
// OperationTimedOut is backed off by the container's gate, shared by its
// tables, instead of three times per request by each request on its own,
// each adding to the load of the throttled partition. Other failures keep
// the SDK's retries (3, with its exponential delay).
func azureShouldRetry(resp *http.Response, err error) bool {
	if err != nil {
		return true // as the SDK's policy without a predicate
	}
	if azureThrottleStatus(resp.StatusCode, resp.Header.Get("x-ms-error-code")) {
		return false
	}
	return runtime.HasStatusCode(resp, http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout)
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
