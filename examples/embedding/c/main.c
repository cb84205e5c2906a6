/*===- main.c - compile a kernel description through quack's C API --------===*\
|*                                                                            *|
|* Part of the quack project.                                                 *|
|*                                                                            *|
|* Usage: quack-embed-c KERNEL.qk [--cubin]                                   *|
|*                                                                            *|
|* Compiles KERNEL.qk with T=bf16, N=4096 to PTX (and to a cubin with        *|
|* --cubin, which needs ptxas), prints sizes and metadata, then shows how a  *|
|* bad binding comes back: a status, an error and diagnostic records.        *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "quack-c/Compiler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *readFile(const char *path, size_t *length) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *data = malloc(size > 0 ? (size_t)size : 1);
  *length = fread(data, 1, (size_t)size, f);
  fclose(f);
  return data;
}

/// Prints each diagnostic as it is emitted, and counts them.
static void onDiagnostic(const quack_diagnostic *d, void *userData) {
  ++*(int *)userData;
  printf("callback: %s at %u:%u: %s\n", quack_severity_name(d->severity),
         d->line, d->column, d->message);
}

/// Compiles `source` to `stage` with the given element type; returns the
/// artifacts, or null after printing the error.
static quack_artifacts_t compileTo(const char *source, size_t length,
                                   const char *name, const char *stage,
                                   const char *type, int *callbacks) {
  quack_compiler_options_t options = quack_compiler_options_create();
  quack_compiler_options_set_arch(options, "sm_90", NULL);
  quack_compiler_options_set_emit(options, stage, NULL);
  quack_compiler_options_add_binding(options, "T", type, NULL);
  quack_compiler_options_add_binding(options, "N", "4096", NULL);
  quack_compiler_options_set_diagnostic_callback(options, onDiagnostic,
                                                 callbacks);
  quack_artifacts_t artifacts = NULL;
  quack_error_t error = NULL;
  int status = quack_compile(source, length, name, options, &artifacts, &error);
  quack_compiler_options_destroy(options);
  if (status != QUACK_OK) {
    printf("status: %s\n", quack_status_name(status));
    printf("message: %s\n", quack_error_message(error));
    size_t count = quack_error_num_diagnostics(error);
    for (size_t i = 0; i < count; ++i) {
      quack_diagnostic d;
      quack_error_diagnostic(error, i, &d);
      printf("diagnostic %zu: severity=%s file=%s line=%u column=%u\n", i,
             quack_severity_name(d.severity), d.file, d.line, d.column);
    }
    quack_error_destroy(error);
    return NULL;
  }
  return artifacts;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s KERNEL.qk [--cubin]\n", argv[0]);
    return 2;
  }
  int wantCubin = argc > 2 && strcmp(argv[2], "--cubin") == 0;
  size_t length = 0;
  char *source = readFile(argv[1], &length);
  if (!source) {
    fprintf(stderr, "cannot read %s\n", argv[1]);
    return 2;
  }
  const char *name =
      strrchr(argv[1], '/') ? strrchr(argv[1], '/') + 1 : argv[1];
  printf("quack C API %d, compiler %s\n", quack_api_version(),
         quack_compiler_version());

  /* 1. PTX. */
  int callbacks = 0;
  quack_artifacts_t ptx =
      compileTo(source, length, name, "ptx", "bf16", &callbacks);
  if (!ptx)
    return 1;
  size_t ptxSize = 0;
  const char *text = quack_artifacts_text(ptx, &ptxSize);
  printf("ptx: %zu bytes, %s\n", ptxSize,
         strstr(text, ".entry rmsnorm_fwd") ? "has .entry rmsnorm_fwd"
                                            : "no entry");
  size_t kernels = quack_artifacts_num_kernels(ptx);
  printf("kernels: %zu\n", kernels);
  for (size_t i = 0; i < kernels; ++i)
    printf("kernel %zu: %s\nmetadata:\n%s", i,
           quack_artifacts_kernel_name(ptx, i),
           quack_artifacts_kernel_metadata_json(ptx, i, "rmsnorm.cubin"));
  quack_artifacts_destroy(ptx);

  /* 2. cubin, when ptxas is there. */
  if (wantCubin) {
    quack_artifacts_t cubin =
        compileTo(source, length, name, "cubin", "bf16", &callbacks);
    if (!cubin)
      return 1;
    size_t size = 0;
    const unsigned char *bytes = quack_artifacts_cubin(cubin, &size);
    printf("cubin: %zu bytes, %s\n", size,
           size > 4 && memcmp(bytes, "\177ELF", 4) == 0 ? "ELF" : "not ELF");
    printf("cubin metadata:\n%s",
           quack_artifacts_kernel_metadata_json(cubin, 0, NULL));
    quack_artifacts_destroy(cubin);
  }

  /* 3. A bad binding: an error with records, nothing printed by quack. */
  quack_artifacts_t bad =
      compileTo(source, length, name, "ptx", "f99", &callbacks);
  printf("bad binding: %s, %d callback(s)\n", bad ? "compiled" : "failed",
         callbacks);
  quack_artifacts_destroy(bad);

  /* 4. Bad arguments are errors too, not crashes. */
  quack_compiler_options_t options = quack_compiler_options_create();
  quack_error_t error = NULL;
  int status = quack_compiler_options_set_emit(options, "sass", &error);
  printf("set_emit(sass): %s: %s\n", quack_status_name(status),
         quack_error_message(error));
  quack_error_destroy(error);
  status = quack_compiler_options_set_config(options, "threads=x", &error);
  printf("set_config(threads=x): %s: %s\n", quack_status_name(status),
         quack_error_message(error));
  quack_error_destroy(error);
  quack_compiler_options_destroy(options);
  free(source);
  return 0;
}
