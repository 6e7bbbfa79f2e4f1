//go:build !nonats

package main

import (
	"context"
	"errors"
	"net/url"

	"github.com/nats-io/nats.go"
	"gocloud.dev/pubsub"
	"gocloud.dev/pubsub/natspubsub"
)

// nats:// (MinIO NATS notifications). gocloud's default opener dials
// NATS_SERVER_URL once for the process; a connection that has given up
// reconnecting would then fail every reopen. So each open dials its own
// connection, closed when the subscription is released.
func init() { eventOpeners["nats"] = openNATS }

func openNATS(ctx context.Context, c *cli, u *url.URL) (*pubsub.Subscription, func(), error) {
	server := c.getenv("NATS_SERVER_URL")
	if server == "" {
		return nil, nil, errors.New("nats:// subscription: NATS_SERVER_URL is not set")
	}
	nc, err := nats.Connect(server, nats.Name("deltasync"))
	if err != nil {
		return nil, nil, err
	}
	q := u.Query()
	q.Del("natsv2")
	u2 := *u
	u2.RawQuery = q.Encode()
	o := &natspubsub.URLOpener{Connection: nc, UseV2: true}
	sub, err := o.OpenSubscriptionURL(ctx, &u2)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return sub, nc.Close, nil
}
