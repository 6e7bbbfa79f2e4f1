//go:build !noazure

package deltalog

import (
	"errors"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
)

func init() {
	storeClassifiers = append(storeClassifiers, classifyAzure)
	throttleClassifiers = append(throttleClassifiers, azureThrottle)
}

// azureThrottle recognises Azure Storage's throttling answers, with their
// Retry-After if any (azureThrottleStatus).
func azureThrottle(err error) (time.Duration, bool) {
	var re *azcore.ResponseError
	if !errors.As(err, &re) || !azureThrottleStatus(re.StatusCode, re.ErrorCode) {
		return 0, false
	}
	if re.RawResponse == nil {
		return 0, true
	}
	return parseRetryAfter(re.RawResponse.Header.Get("Retry-After")), true
}

// azureThrottleStatus reports whether a status and x-ms-error-code are
// Azure Storage throttling a partition or an account: 503 (ServerBusy,
// "Operations per second is over the account limit", "Ingress/Egress is
// over the account limit"), 500 OperationTimedOut (Azure's scalability
// targets name both as the answers of a partition past its limit) and 429.
// The SDK does not retry them itself (azureRetry): the container's gate
// backs them off for all of its tables.
func azureThrottleStatus(status int, code string) bool {
	switch status {
	case http.StatusServiceUnavailable, http.StatusTooManyRequests:
		return true
	case http.StatusInternalServerError:
		return code == string(bloberror.OperationTimedOut)
	}
	return false
}

const azureCredentialHint = "set AZURE_STORAGE_ACCOUNT and AZURE_STORAGE_KEY (or AZURE_STORAGE_SAS_TOKEN), sign in for " +
	"DefaultAzureCredential (az login, a managed identity), or let the catalog vend READ credentials (credentials: vended)"

// classifyAzure recognises the Azure client's errors for a missing
// container, refused credentials and a missing account.
func classifyAzure(err error) *StoreError {
	switch {
	case bloberror.HasCode(err, bloberror.ContainerNotFound):
		return &StoreError{Kind: ErrBucketNotFound, Err: err,
			Hint: "Azure has no such container in this storage account: check the container in the table URL (azblob://CONTAINER/path/to/table) and the account"}
	case bloberror.HasCode(err, bloberror.AuthenticationFailed, bloberror.InvalidAuthenticationInfo, bloberror.NoAuthenticationInformation):
		return &StoreError{Kind: ErrAccessDenied, Err: err, Hint: "Azure did not accept the credentials: " + azureCredentialHint}
	case bloberror.HasCode(err, bloberror.AuthorizationFailure, bloberror.AuthorizationPermissionMismatch, bloberror.InsufficientAccountPermissions):
		return &StoreError{Kind: ErrAccessDenied, Err: err,
			Hint: "Azure refused the request: the identity in use needs list and read on the container (Storage Blob Data Reader), " +
				"or let the catalog vend READ credentials (credentials: vended)"}
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) && re.StatusCode == 403 {
		return &StoreError{Kind: ErrAccessDenied, Err: err, Hint: "Azure answered 403 Forbidden: " + azureCredentialHint}
	}
	if containsAny(err.Error(), "Options.AccountName is required") {
		return &StoreError{Kind: ErrNoCredentials, Err: err,
			Hint: "no Azure storage account is configured: add ?storage_account=NAME to the table URL or " + azureCredentialHint}
	}
	return nil
}
