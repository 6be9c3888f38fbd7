# Source: https://github.com/ljynlp/W2NER/issues/31
# Report: GPU memory grows through evaluation until CUDA OOM even at batch_size=1 on large corpora; cause is the per-batch grid predictions/labels kept on the GPU
# Shape: inside no_grad, argmax'd word-pair grid predictions and masked labels (both CUDA tensors) are appended to lists that live for the whole eval pass, cat'ed only at the end
# Expect: TML004 lines 45, 46
import torch
import torch.nn as nn
from sklearn.metrics import precision_recall_fscore_support


def cal_f1(c, p, r):
    if r == 0 or p == 0:
        return 0, 0, 0
    rec, prec = c / r, c / p
    return 2 * rec * prec / (rec + prec + 1e-12), prec, rec


class GridTrainer:
    def __init__(self, model, decoder, logger):
        self.model = model
        self.decoder = decoder
        self.logger = logger
        self.criterion = nn.CrossEntropyLoss()

    def eval(self, epoch, loader, is_test=False):
        self.model.eval()
        pred_result = []
        label_result = []
        tot_c = tot_p = tot_r = 0
        with torch.no_grad():
            for batch in loader:
                entity_text = batch[-1]
                batch = [t.cuda() for t in batch[:-1]]
                bert_inputs, grid_labels, grid_mask2d, pieces2word, dist_inputs, sent_length = batch

                outputs = self.model(bert_inputs, grid_mask2d, dist_inputs, pieces2word, sent_length)
                grid_mask2d = grid_mask2d.clone()
                outputs = torch.argmax(outputs, -1)
                c, p, r, _ = self.decoder(outputs.cpu().numpy(), entity_text, sent_length.cpu().numpy())
                tot_c += c
                tot_p += p
                tot_r += r

                grid_labels = grid_labels[grid_mask2d].contiguous().view(-1)
                outputs = outputs[grid_mask2d].contiguous().view(-1)
                label_result.append(grid_labels)  # expect: TML004
                pred_result.append(outputs)  # expect: TML004

        label_result = torch.cat(label_result)
        pred_result = torch.cat(pred_result)
        p, r, f1, _ = precision_recall_fscore_support(label_result.cpu().numpy(),
                                                      pred_result.cpu().numpy(), average="macro")
        e_f1, e_p, e_r = cal_f1(tot_c, tot_p, tot_r)
        title = "TEST" if is_test else "EVAL"
        self.logger.info("%s %s label f1 %.4f entity f1 %.4f", title, epoch, f1, e_f1)
        return e_f1
