# Source: https://github.com/ZhengkunTian/rnn-transducer/blob/53fd7d25bbc520b0efad387b6451994ba29c065e/train.py
# Report: audit: eval() sets model.eval() and calls model.recognize() per dev batch with grad enabled; recognize() runs the encoder and a token-by-token greedy search whose prediction-net state is fed back through autograd, so activations for the whole batch are saved for a backward that never comes
# Shape: fixed: recognize() is decorated with @torch.no_grad() (the fed-back state carries no graph) and evaluate() also wraps the decoding call in torch.no_grad(); the loop-carried (pred_out, state) rebinding is unchanged
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


def char_errors(hyps, refs):
    """Summed Levenshtein distance and reference length over a batch."""
    dist, words = 0, 0
    for h, r in zip(hyps, refs):
        row = list(range(len(r) + 1))
        for i, a in enumerate(h, 1):
            prev, row[0] = row[0], i
            for j, b in enumerate(r, 1):
                prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (a != b))
        dist += row[-1]
        words += len(r)
    return dist, words


class Transducer(nn.Module):
    def __init__(self, encoder, predictor, joint, blank=0):
        super().__init__()
        self.encoder = encoder
        self.predictor = predictor
        self.joint = joint
        self.blank = blank

    @torch.no_grad()
    def recognize(self, feats, feat_lens):
        enc_out, _ = self.encoder(feats, feat_lens)
        start = torch.zeros(1, 1, dtype=torch.long, device=feats.device)
        hyps = []
        for b in range(feats.size(0)):
            pred_out, state = self.predictor(start)
            tokens = []
            for t in range(int(feat_lens[b])):
                logits = self.joint(enc_out[b, t], pred_out.view(-1))
                best = int(logits.argmax(dim=-1).item())
                if best == self.blank:
                    continue
                tokens.append(best)
                prev = torch.full((1, 1), best, dtype=torch.long, device=feats.device)
                pred_out, state = self.predictor(prev, state)
            hyps.append(tokens)
        return hyps


def evaluate(epoch, cfg, model, dev_loader, logger, writer=None):
    model.eval()
    total_dist, total_words, cer = 0, 0, 0.0
    for step, (feats, feat_lens, targets, target_lens) in enumerate(dev_loader):
        if cfg.num_gpu > 0:
            feats, feat_lens = feats.cuda(), feat_lens.cuda()
            targets, target_lens = targets.cuda(), target_lens.cuda()
        feats = feats[:, : int(feat_lens.max().item()), :]
        with torch.no_grad():
            preds = model.recognize(feats, feat_lens)
        refs = [targets[i, : int(target_lens[i])].tolist() for i in range(targets.size(0))]
        dist, n_words = char_errors(preds, refs)
        total_dist += dist
        total_words += n_words
        cer = 100.0 * total_dist / max(total_words, 1)
        if step % cfg.show_interval == 0:
            logger.info("valid epoch %d (%d/%d)  CER %.3f%%", epoch, step, len(dev_loader), cer)
    logger.info("valid epoch %d  average CER %.3f%%", epoch, cer)
    if writer is not None:
        writer.add_scalar("cer", cer, epoch)
    return cer
