//go:build !norabbit

package main

// rabbit:// (MinIO AMQP notifications). gocloud's opener redials
// RABBIT_SERVER_URL when its connection has closed.
import _ "gocloud.dev/pubsub/rabbitpubsub"

func init() { eventOpeners["rabbit"] = openWithDefaultMux }
