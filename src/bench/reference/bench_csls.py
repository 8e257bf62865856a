"""Reference timing for `crossling bench csls`: CSLS top-k for every source row, written the way MUSE
(facebookresearch/MUSE, src/utils.py `get_nn_avg_dist` without faiss, src/dico_builder.py `get_candidates` with
`csls_knn_10`) computes it in PyTorch: the mean cosine of the k nearest neighbours of every target among the
sources and of every source among the targets (blocks of 1024 rows), then 2·cos − r_src − r_tgt for blocks of
128 source rows and their top k.

Usage: bench_csls.py SRC.npy TGT.npy K TOPK THREADS OUT.npy [DEVICE]   (SRC, TGT: [n, d] float32; DEVICE cpu)
Prints one JSON line with the wall and CPU time (all threads); writes the top-k indices to OUT.npy.
"""
import json
import sys
import time

import numpy as np
import torch


def get_nn_avg_dist(emb, query, knn):
    bs = 1024
    all_distances = []
    emb = emb.transpose(0, 1).contiguous()
    for i in range(0, query.shape[0], bs):
        distances = query[i:i + bs].mm(emb)
        best_distances, _ = distances.topk(knn, dim=1, largest=True, sorted=True)
        all_distances.append(best_distances.mean(1))
    return torch.cat(all_distances)


def csls_topk(src, tgt, knn, topk):
    r_src = get_nn_avg_dist(tgt, src, knn)  # per source: mean cos of its knn targets
    r_tgt = get_nn_avg_dist(src, tgt, knn)  # per target: mean cos of its knn sources
    bs = 128
    out = []
    for i in range(0, src.shape[0], bs):
        scores = src[i:i + bs].mm(tgt.transpose(0, 1))
        scores.mul_(2)
        scores.sub_(r_src[i:i + bs][:, None] + r_tgt[None, :])
        out.append(scores.topk(topk, dim=1, largest=True, sorted=True)[1])
    return torch.cat(out)


def main():
    src_path, tgt_path, knn, topk, threads, out_path = sys.argv[1:7]
    device = torch.device(sys.argv[7] if len(sys.argv) > 7 else "cpu")
    torch.set_num_threads(int(threads))
    src = torch.from_numpy(np.load(src_path)).to(device)
    tgt = torch.from_numpy(np.load(tgt_path)).to(device)
    if device.type == "cuda":
        torch.cuda.synchronize()
    t0, c0 = time.perf_counter(), time.process_time()
    src = src / src.norm(2, 1, keepdim=True).expand_as(src)
    tgt = tgt / tgt.norm(2, 1, keepdim=True).expand_as(tgt)
    idx = csls_topk(src, tgt, int(knn), int(topk)).cpu()
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    np.save(out_path, idx.numpy())
    print(json.dumps({"seconds": seconds, "cpu_seconds": cpu, "torch": torch.__version__, "threads": torch.get_num_threads()}))


if __name__ == "__main__":
    main()
