# Source: https://github.com/rohithreddy024/Text-Summarizer-Pytorch/blob/a86db457d4f986659872f7f0bfbd602b50fae242/eval.py
# Report: audited eval.py (validate mode) as published: valid_one_batch returns mle_loss.item() and validIters calls it under T.autograd.no_grad()
# Shape: the helper returns a Python float and the forward runs grad-disabled, so mle_total only sums floats across the validation set
# Expect: near-miss: must be silent

import os
import time

import torch as T
import torch.nn.functional as F

from model import Model
from data_util import config, data
from data_util.batcher import Batcher
from data_util.data import Vocab
from train_util import get_enc_data, get_dec_data


def get_cuda(tensor):
    if T.cuda.is_available():
        tensor = tensor.cuda()
    return tensor


class Evaluate(object):
    def __init__(self, data_path, opt, batch_size=config.batch_size):
        self.vocab = Vocab(config.vocab_path, config.vocab_size)
        self.batcher = Batcher(data_path, self.vocab, mode='eval',
                               batch_size=batch_size, single_pass=True)
        self.opt = opt
        time.sleep(5)

    def setup_valid(self):
        self.model = get_cuda(Model())
        checkpoint = T.load(os.path.join(config.save_model_path, self.opt.load_model))
        self.model.load_state_dict(checkpoint["model_dict"])

    def valid_one_batch(self, batch):
        enc_batch, enc_lens, enc_padding_mask, enc_batch_extend_vocab, extra_zeros, ct_e = get_enc_data(batch)
        dec_batch, max_dec_len, dec_lens, target_batch = get_dec_data(batch)
        enc_out, enc_hidden = self.model.encoder(self.model.embeds(enc_batch), enc_lens)
        prev_s = None
        sum_temporal_srcs = None
        step_losses = []
        s_t = (enc_hidden[0], enc_hidden[1])
        pad_id = self.vocab.word2id(data.PAD_TOKEN)

        for t in range(min(max_dec_len, config.max_dec_steps)):
            x_t = self.model.embeds(dec_batch[:, t])
            final_dist, s_t, ct_e, sum_temporal_srcs, prev_s = self.model.decoder(
                x_t, s_t, enc_out, enc_padding_mask, ct_e, extra_zeros,
                enc_batch_extend_vocab, sum_temporal_srcs, prev_s)
            log_probs = T.log(final_dist + config.eps)
            step_loss = F.nll_loss(log_probs, target_batch[:, t], reduction="none", ignore_index=pad_id)
            step_losses.append(step_loss)

        losses = T.sum(T.stack(step_losses, 1), 1)
        batch_avg_loss = losses / dec_lens
        mle_loss = T.mean(batch_avg_loss)
        return mle_loss.item()

    def validIters(self):
        self.setup_valid()
        count = mle_total = 0
        batch = self.batcher.next_batch()
        while batch is not None:
            with T.autograd.no_grad():
                mle_loss = self.valid_one_batch(batch)
            mle_total += mle_loss
            count += 1
            batch = self.batcher.next_batch()

        mle_avg = mle_total / count
        print(self.opt.load_model, "mle_loss:", "%.3f" % mle_avg)


if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser()
    parser.add_argument("--start_from", type=str, default="0020000.tar")
    parser.add_argument("--load_model", type=str, default=None)
    opt = parser.parse_args()

    saved_models = sorted(os.listdir(config.save_model_path))
    saved_models = saved_models[saved_models.index(opt.start_from):]
    for f in saved_models:
        opt.load_model = f
        Evaluate(config.valid_data_path, opt).validIters()
