// Command metricnames prints, one per line as "name label,label,...", every
// metric that sync.NewMetrics registers. The deploy tests run it to check
// that the metric list the alerts and dashboards are written against matches
// what the daemon really exports. It is a test helper, not a user command.
package main
