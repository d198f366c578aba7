/* Local calls, each made REPS times (and a few once): the class `local` of
 * docs/runtime.md.  tests/runtime/test_local_calls.py lists what each must
 * record; the six hot ones only with SCALEWISE_HOT_LOCAL=1.
 *
 * Usage: local_calls REPS FILE   (on two ranks) */
#include <mpi.h>
#include <stdlib.h>

static int keep_attr(MPI_Comm c, int k, void *extra, void *in, void *out, int *flag)
{
    (void)c, (void)k, (void)extra;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int reps = atoi(argv[1]), me, P, flag, n, rank, cls, ints, addrs, types, comb, pos, result, amode;
    MPI_Comm W = MPI_COMM_WORLD, cart, graph, half, inter;
    MPI_Comm_rank(W, &me);
    MPI_Comm_size(W, &P);
    int dims[2] = {0, 0}, periods[2] = {1, 0}, coords[2], gindex[1] = {0}, edges[1] = {0}, nb[1];
    MPI_Dims_create(P, 2, dims);
    /* two ranks: an intercommunicator between them, for the remote queries */
    MPI_Comm_split(W, me, 0, &half);
    MPI_Intercomm_create(half, 0, W, 1 - me, 3, &inter);
    MPI_Cart_create(W, 2, dims, periods, 0, &cart);
    MPI_Graph_create(MPI_COMM_SELF, 1, gindex, edges, 0, &graph);
    MPI_Group wg, cg;
    MPI_Comm_group(W, &wg);
    MPI_Comm_group(cart, &cg);
    MPI_Datatype vec, dt;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int keyval, wkey, tkey;
    MPI_Comm_create_keyval(keep_attr, MPI_COMM_NULL_DELETE_FN, &keyval, NULL);
    MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &wkey, NULL);
    MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &tkey, NULL);
    MPI_Win win;
    MPI_Win_create_dynamic(MPI_INFO_NULL, W, &win);
    MPI_File fh;
    MPI_File_open(W, argv[2], MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh);
    char packed[64], *bsend = malloc(1 << 16);
    int in[4] = {1, 2, 3, 4}, out[4], r0 = 0, r1, ai, *val;
    MPI_Aint aa;
    MPI_Offset off;
    MPI_Info info;
    MPI_Group g;
    double attach[8];
    MPI_Status st;
    for (int i = 0; i < reps; i++) {
        MPI_Cart_coords(cart, me, 2, coords);
        MPI_Cart_get(cart, 2, dims, periods, coords);
        MPI_Cart_rank(cart, coords, &rank);
        MPI_Cart_shift(cart, 0, 1, &r0, &r1);
        MPI_Cart_map(W, 2, dims, periods, &rank);
        MPI_Cartdim_get(cart, &n);
        MPI_Topo_test(cart, &n);
        MPI_Graph_get(graph, 1, 1, gindex, edges);
        MPI_Graph_map(MPI_COMM_SELF, 1, gindex, edges, &rank);
        MPI_Graph_neighbors_count(graph, 0, &n);
        MPI_Graph_neighbors(graph, 0, 1, nb);
        MPI_Graphdims_get(graph, &n, &rank);
        MPI_Comm_remote_size(inter, &n);
        MPI_Comm_remote_group(inter, &g);
        MPI_Group_free(&g);
        MPI_Comm_test_inter(W, &flag);
        MPI_Group_compare(wg, cg, &result);
        r0 = 0;
        MPI_Group_translate_ranks(cg, 1, &r0, wg, &r1);
        MPI_Error_class(MPI_ERR_COUNT, &cls);
        pos = 0;
        MPI_Pack(in, 1, vec, packed, sizeof packed, &pos, W);
        pos = 0;
        MPI_Unpack(packed, sizeof packed, &pos, out, 1, vec, W);
        MPI_Type_get_envelope(vec, &ints, &addrs, &types, &comb);
        MPI_Type_get_contents(vec, 3, 0, 1, in, &aa, &dt);
        MPI_Comm_set_attr(cart, keyval, &ai);
        MPI_Comm_get_attr(cart, keyval, &val, &flag);
        MPI_Comm_delete_attr(cart, keyval);
        MPI_Win_set_attr(win, wkey, &ai);
        MPI_Win_get_attr(win, wkey, &val, &flag);
        MPI_Win_delete_attr(win, wkey);
        MPI_Type_set_attr(vec, tkey, &ai);
        MPI_Type_get_attr(vec, tkey, &val, &flag);
        MPI_Type_delete_attr(vec, tkey);
        MPI_Buffer_attach(bsend, 1 << 16);
        MPI_Buffer_detach(&bsend, &n);
        MPI_File_get_amode(fh, &amode);
        MPI_File_get_byte_offset(fh, 0, &off);
        MPI_File_get_group(fh, &g);
        MPI_Group_free(&g);
        MPI_File_get_info(fh, &info);
        MPI_Info_free(&info);
        MPI_File_get_position(fh, &off);
        MPI_File_get_size(fh, &off);
        MPI_File_get_view(fh, &off, &dt, &dt, packed);
        MPI_Win_attach(win, attach, sizeof attach);
        MPI_Win_detach(win, attach);
        MPI_Win_get_group(win, &g);
        MPI_Group_free(&g);
        MPI_Win_get_info(win, &info);
        MPI_Info_free(&info);
        /* the hot ones */
        MPI_Comm_rank(W, &rank);
        MPI_Comm_size(W, &n);
        MPI_Wtime();
        MPI_Wtick();
        MPI_Type_size(vec, &n);
        st.MPI_SOURCE = 0;
        MPI_Sendrecv(in, 2, MPI_INT, me, 5, out, 2, MPI_INT, me, 5, W, &st);
        MPI_Get_count(&st, MPI_INT, &n);
    }
    MPI_Comm_free_keyval(&keyval);
    MPI_Win_free_keyval(&wkey);
    MPI_Type_free_keyval(&tkey);
    MPI_Win_free(&win);
    MPI_File_close(&fh);
    MPI_Type_free(&vec);
    MPI_Group_free(&wg);
    MPI_Group_free(&cg);
    MPI_Comm_free(&cart);
    MPI_Comm_free(&graph);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    free(bsend);
    MPI_Finalize();
    return 0;
}
