//go:build !nokafka

package main

import _ "gocloud.dev/pubsub/kafkapubsub" // kafka:// (MinIO / Redpanda notifications)

func init() { eventOpeners["kafka"] = openWithDefaultMux }
