# Source: https://github.com/yalesong/pvse/issues/30
# Report: eval.py's embedding pass leaked GPU memory on every forward and crashed after ~7700 samples on a 24GB card (no no_grad; embeddings copied into a GPU table)
# Shape: encode helper after model.eval() runs the forward without no_grad and index-writes each attached embedding into a GPU table built on the first batch
# Expect: TML003 line 23; TML001 line 35; TML001 line 36
import numpy as np
import torch

from retrieval.data import build_test_loader
from retrieval.model import JointEmbedder


def encode_split(model, loader, keep_on_gpu=False):
    """Embed every image and caption of the split, indexed by sample id."""
    model.eval()
    multi_head = getattr(model, "module", model).num_heads > 1

    image_table, text_table = None, None
    for step, (images, tokens, lengths, ids) in enumerate(loader):
        images = images.cuda(non_blocking=True)
        tokens = tokens.cuda(non_blocking=True)
        lengths = lengths.cuda()

        img_vec, txt_vec, *_ = model(images, tokens, lengths)  # expect: TML003
        del images, tokens, lengths

        if image_table is None:
            shape = [len(loader.dataset), *img_vec.shape[1:]] if multi_head else [len(loader.dataset), img_vec.size(1)]
            if keep_on_gpu:
                image_table = torch.zeros(shape, dtype=img_vec.dtype, device="cuda")
                text_table = torch.zeros(shape, dtype=txt_vec.dtype, device="cuda")
            else:
                image_table = np.zeros(shape, dtype=np.float32)
                text_table = np.zeros(shape, dtype=np.float32)

        image_table[ids] = img_vec if keep_on_gpu else img_vec.data.cpu().numpy()  # expect: TML001
        text_table[ids] = txt_vec if keep_on_gpu else txt_vec.data.cpu().numpy()  # expect: TML001

    return image_table, text_table


def run_eval(args, vocab):
    model = JointEmbedder(vocab, args).cuda()
    model.load_state_dict(torch.load(args.ckpt, map_location="cuda"))
    loader = build_test_loader(args, vocab)
    img_embs, txt_embs = encode_split(model, loader, keep_on_gpu=args.eval_on_gpu)
    scores = img_embs @ txt_embs.T if not args.eval_on_gpu else img_embs.mm(txt_embs.t())
    return scores
