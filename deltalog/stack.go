package deltalog

// sdkStackBytes is about the stack a storage SDK's request needs below
// bucketGate.do: the AWS SDK's middleware chain is ~100 frames deep and its
// endpoint resolver has one large frame.
const sdkStackBytes = 32 << 10

// growStack makes sure the calling goroutine's stack has sdkStackBytes
// free before a storage request starts. A goroutine starts with a few KiB
// of stack, and the collector halves the stacks of goroutines that are
// waiting (as storage requests do, at their gate); growing the stack
// copies every frame on it, so growing it inside the SDK's call chain
// copied ~100 frames two or three times per request: 14-20% of the CPU
// of a steady cycle on S3 (BENCHMARKS.md, "CPU per unchanged table on
// S3"). Growing it here copies the dozen frames above the request once.
//
//go:noinline
func growStack(i int) byte {
	var pad [sdkStackBytes]byte
	// An index the compiler cannot know keeps the frame (with a constant
	// one it folded the whole function to a zero).
	pad[i&(len(pad)-1)] = 1
	return pad[(i*7)&(len(pad)-1)]
}
