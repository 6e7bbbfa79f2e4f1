package glue

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"
	"github.com/aws/smithy-go"

	"github.com/deltasync/deltasync/catalog"
)

func TestErrorsMapToTheNeutralClasses(t *testing.T) {
	for _, tc := range []struct {
		err     error
		class   error
		refused bool
	}{
		{&types.ConcurrentModificationException{Message: aws.String("Update table failed due to concurrent modifications.")}, catalog.ErrConflict, false},
		{&types.EntityNotFoundException{Message: aws.String("Table t not found.")}, catalog.ErrNotFound, false},
		{&types.InvalidInputException{Message: aws.String("bad")}, catalog.ErrRefused, true},
		{&types.AccessDeniedException{Message: aws.String("not authorized")}, catalog.ErrRefused, true},
		{&types.ResourceNumberLimitExceededException{Message: aws.String("100000 per TABLE")}, catalog.ErrRefused, true},
		{&types.ValidationException{Message: aws.String("maxResults")}, catalog.ErrRefused, true},
		{&types.AlreadyExistsException{Message: aws.String("exists")}, ErrAlreadyExists, false},
		{&smithy.GenericAPIError{Code: "ThrottlingException", Message: "Rate exceeded"}, nil, false},
		{&types.InternalServiceException{Message: aws.String("oops")}, nil, false},
	} {
		err := wrap("UpdateTable", "db.t", tc.err)
		name := tc.err.(smithy.APIError).ErrorCode()
		for _, class := range []error{catalog.ErrConflict, catalog.ErrNotFound, catalog.ErrRefused, ErrAlreadyExists} {
			if got := errors.Is(err, class); got != (class == tc.class) {
				t.Errorf("%s: errors.Is(%v) = %v", name, class, got)
			}
		}
		if target := reflect.New(reflect.TypeOf(tc.err)); !errors.As(err, target.Interface()) {
			t.Errorf("%s: the SDK's typed error is not reachable with errors.As", name)
		}
		if !strings.Contains(err.Error(), "glue: UpdateTable db.t: ") || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: message %q names neither the call, the table nor the code", name, err)
		}
		r, ok := RefusalOf(err)
		if ok != tc.refused {
			t.Errorf("%s: RefusalOf ok = %v", name, ok)
		}
		if ok && (r.Type != name || r.Operation != "UpdateTable" || r.Message != tc.err.(smithy.APIError).ErrorMessage() || r.Status != 400) {
			t.Errorf("%s: Refusal %+v", name, r)
		}
	}
	if wrap("GetTable", "db.t", nil) != nil {
		t.Error("wrap(nil) is not nil")
	}
}
