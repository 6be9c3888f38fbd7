# Source: https://github.com/atulkum/pointer_summarizer/blob/6694379570b672d874dd3692833bb334e1b7325b/training_ptr_gen/eval.py
# Report: audit: Evaluate.run_eval() folds each batch loss into an exponential running average (calc_running_avg_loss) and has no torch.no_grad(); fixed here by running the forward pass and loss under no_grad and folding in loss.item()
# Shape: same loop and the same loop-carried running average (rebound from its previous value every batch), but over Python floats, so no graph links one eval batch to the next
# Expect: near-miss: must be silent
import os
import time

import torch
from torch.utils.tensorboard import SummaryWriter

from data_util import config
from data_util.batcher import Batcher
from data_util.data import Vocab
from model import Model
from train_util import get_input_from_batch, get_output_from_batch

use_cuda = config.use_gpu and torch.cuda.is_available()


class Evaluate:
    def __init__(self, model_file_path, decay=0.99):
        self.vocab = Vocab(config.vocab_path, config.vocab_size)
        self.batcher = Batcher(config.eval_data_path, self.vocab, mode="eval",
                               batch_size=config.batch_size, single_pass=True)
        eval_dir = os.path.join(config.log_root, "eval_%s" % os.path.basename(model_file_path))
        os.makedirs(eval_dir, exist_ok=True)
        self.writer = SummaryWriter(eval_dir)
        self.model = Model(model_file_path, is_eval=True)
        self.decay = decay

    def run_eval(self):
        self.model.eval()
        running_avg_loss, step = 0.0, 0
        start = time.time()
        batch = self.batcher.next_batch()
        while batch is not None:
            enc_batch, enc_padding_mask, enc_lens, enc_extend_vocab, extra_zeros, c_t_1, coverage = \
                get_input_from_batch(batch, use_cuda)
            dec_batch, dec_padding_mask, max_dec_len, dec_lens_var, target_batch = \
                get_output_from_batch(batch, use_cuda)
            n_steps = min(max_dec_len, config.max_dec_steps)
            with torch.no_grad():
                # encoder + teacher-forced pointer-generator decoder over n_steps
                final_dists, attn_dists, coverages = self.model(
                    enc_batch, enc_lens, enc_padding_mask, dec_batch[:, :n_steps],
                    c_t_1, extra_zeros, enc_extend_vocab, coverage)
                target = target_batch[:, :n_steps].unsqueeze(2)
                gold_probs = torch.gather(final_dists, 2, target).squeeze(2)
                nll = -torch.log(gold_probs + config.eps)
                if config.is_coverage:
                    cov = torch.sum(torch.min(attn_dists, coverages), 2)
                else:
                    cov = torch.zeros_like(nll)
                masked = (nll + config.cov_loss_wt * cov) * dec_padding_mask[:, :n_steps]
                loss = torch.mean(masked.sum(1) / dec_lens_var)
            loss_value = loss.item()

            running_avg_loss = loss_value if step == 0 else running_avg_loss * self.decay + (1 - self.decay) * loss_value
            tag = "running_avg_loss/decay=%f" % self.decay
            self.writer.add_scalar(tag, min(float(running_avg_loss), 12.0), step)
            step += 1
            if step % 100 == 0:
                self.writer.flush()
            if step % 1000 == 0:
                print("steps %d, seconds for 1000 batch: %.2f , loss: %f"
                      % (step, time.time() - start, float(running_avg_loss)))
                start = time.time()
            batch = self.batcher.next_batch()
        return float(running_avg_loss)


if __name__ == "__main__":
    import sys

    Evaluate(sys.argv[1]).run_eval()
