# Source: https://github.com/gentaiscool/end2end-asr-pytorch/issues/29
# Report: A LibriSpeech run that only trained at batch size 4 then hit CUDA OOM in the validation pass after the first epoch; a commenter added torch.no_grad() before the validation loop in trainer.py, which seemed to reduce the problem.
# Shape: a Trainer class whose per-epoch evaluate() puts the transformer ASR model in eval mode and decodes every validation loader with autograd still on; losses are reduced with .item().
# Expect: TML003 line 30
import logging

import torch


class Trainer:
    def __init__(self, model, opt, id2label, calculate_metrics, calculate_cer, pad_token=0):
        self.model = model
        self.opt = opt
        self.id2label = id2label
        self.calculate_metrics = calculate_metrics
        self.calculate_cer = calculate_cer
        self.pad_token = pad_token

    def _decode(self, seqs):
        return ["".join(self.id2label[int(x)] for x in seq) for seq in seqs]

    def evaluate(self, valid_loader_list, smoothing, loss_type):
        self.model.eval()
        results = []
        for ind, valid_loader in enumerate(valid_loader_list):
            total_valid_loss, total_valid_cer, total_valid_char = 0.0, 0.0, 0
            for src, tgt, src_percentages, src_lengths, tgt_lengths in valid_loader:
                src, tgt = src.cuda(), tgt.cuda()

                pred, gold, hyp_seq, gold_seq = self.model(src, src_lengths, tgt, verbose=False)  # expect: TML003

                sizes = src_percentages.mul_(int(pred.size(1))).int()
                loss, _ = self.calculate_metrics(pred, gold, input_lengths=sizes, target_lengths=tgt_lengths,
                                                 smoothing=smoothing, loss_type=loss_type)
                strs_gold = self._decode(gold_seq)
                strs_hyps = self._decode(hyp_seq)
                for hyp, ref in zip(strs_hyps, strs_gold):
                    total_valid_cer += self.calculate_cer(hyp.replace(" ", ""), ref.replace(" ", ""))
                    total_valid_char += len(ref.replace(" ", ""))
                total_valid_loss += loss.item()

            logging.info("VALID SET %d LOSS:%.4f CER:%.2f%%", ind, total_valid_loss / len(valid_loader),
                         total_valid_cer * 100 / max(total_valid_char, 1))
            results.append(total_valid_loss / len(valid_loader))
        return results
