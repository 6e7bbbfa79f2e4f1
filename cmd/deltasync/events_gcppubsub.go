//go:build !nogcppubsub

package main

import _ "gocloud.dev/pubsub/gcppubsub" // gcppubsub:// (Cloud Storage Pub/Sub notifications)

func init() { eventOpeners["gcppubsub"] = openWithDefaultMux }
