//go:build !noazuresb

package main

import _ "gocloud.dev/pubsub/azuresb" // azuresb:// (Event Grid → Service Bus)

func init() { eventOpeners["azuresb"] = openWithDefaultMux }
