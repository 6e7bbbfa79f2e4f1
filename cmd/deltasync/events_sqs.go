//go:build !nosqs

package main

import _ "gocloud.dev/pubsub/awssnssqs" // awssqs:// (S3 → SQS, S3 → SNS → SQS, EventBridge → SQS)

func init() { eventOpeners["awssqs"] = openWithDefaultMux }
