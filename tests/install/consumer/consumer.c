/* A tiny C program against the installed fabcoll: a world of one, an all-reduce. */
#include <fabcoll/fabcoll.h>
#include <stdio.h>

int main(void) {
  fc_context_t ctx;
  fc_comm_t world;
  double in[2] = {1.5, 2.5}, out[2] = {0, 0};
  if (fc_init(&ctx) != FC_SUCCESS || fc_comm_world(ctx, &world) != FC_SUCCESS) return 1;
  if (fc_allreduce(in, out, 2, FC_DOUBLE, FC_SUM, world) != FC_SUCCESS) return 2;
  if (out[1] != 2.5) return 3;
  if (fc_bcast(out, 2, FC_DOUBLE, 5, world) != FC_ERR_INVALID_ROOT) return 4;
  printf("consumer.c: %s\n", fc_strerror(FC_SUCCESS));
  return fc_finalize(ctx) == FC_SUCCESS ? 0 : 5;
}
