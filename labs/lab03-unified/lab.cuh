// lab03 interface: shared by kernel.cu (yours), the solution and driver.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "cuda_check.cuh"  // CUDA_CHECK(call): throws on an error, which the grader reports
#include "prefetch.cuh"    // memlabs::prefetch_to_device / prefetch_to_host / advise, for CUDA 12 and 13

// One record: a line of text that lives outside the record, behind a pointer.
// Copying a Record copies the pointer, not the text: that is why moving a
// table of them to the GPU by hand takes a deep copy.
struct Record {
  char* text;   // `length` characters, not terminated
  int length;   // >= 1
  int changed;  // written by the kernel: how many characters it upper-cased
};

// What create_table builds, process_table works on and destroy_table frees.
struct Table {
  Record* records = nullptr;   // `count` records
  int count = 0;
  char* text = nullptr;        // one block holding every record's text, back to back
  std::size_t text_bytes = 0;  // the sum of the lengths
};

// Allocates `count` records and a text block of sum(lengths) bytes, and points
// records[i].text at its own lengths[i] bytes of the block (record 0 first).
// The driver then writes every length and every text from the host.
Table create_table(const int* lengths, int count);

// Upper-cases every record's text and sets its `changed`, with GPU work on
// `stream`. On entry the host has just written the lengths and the texts; as
// soon as this returns, the host reads every `changed` and every text, with
// no synchronisation of its own.
void process_table(Table& table, cudaStream_t stream);

// Frees everything create_table allocated and resets `table`.
void destroy_table(Table& table);
