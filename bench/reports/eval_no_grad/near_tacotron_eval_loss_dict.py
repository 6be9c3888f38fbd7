# Source: https://github.com/Tomiinek/Multilingual_Text_to_Speech/blob/0401a6dee2110877ac10634f5bedeb2c37a02de8/train.py
# Report: multilingual Tacotron 2 evaluate(): runs every dev batch twice (teacher forcing on/off), computes mel-cepstral distortion and sums the criterion's per-term loss dict over the dev set
# Shape: the whole dev loop sits in torch.no_grad(), so the batch_losses tensors summed into eval_losses carry no graph (one scalar per loss term, replaced each batch); spectrograms go to NumPy via .data.cpu()
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn.functional as F


def mel_cepstral_distortion(gen, ref):
    n = min(gen.shape[1], ref.shape[1])
    return float(np.mean(np.sqrt(np.sum((gen[:, :n] - ref[:, :n]) ** 2, axis=0))))


class TacotronLoss(torch.nn.Module):
    def forward(self, src_len, trg_len, pre_pred, pre_trg, post_pred, post_trg, stop_pred, stop_trg):
        losses = {
            "mel_pre": F.mse_loss(pre_pred, pre_trg),
            "mel_pos": F.mse_loss(post_pred, post_trg),
            "stop_token": F.binary_cross_entropy_with_logits(stop_pred, stop_trg),
        }
        return sum(losses.values()), losses


def to_gpu(x):
    return x.cuda(non_blocking=True) if torch.is_tensor(x) else x


def evaluate(epoch, data, model, criterion, logger, stop_frames=5):
    model.eval()
    mcd, mcd_count = 0, 0
    eval_losses = {}

    with torch.no_grad():
        for i, batch in enumerate(data):
            batch = list(map(to_gpu, batch))
            src, src_len, trg_mel, trg_len, stop_trg, spkrs, langs = batch

            # run the model twice, with and without teacher forcing
            post_pred, pre_pred, stop_pred, alignment = model(src, src_len, trg_mel, trg_len, spkrs, langs, 1.0)
            post_pred_0, _, stop_pred_0, alignment_0 = model(src, src_len, trg_mel, trg_len, spkrs, langs, 0.0)
            stop_pred_probs = torch.sigmoid(stop_pred_0)

            loss, batch_losses = criterion(src_len, trg_len, pre_pred, trg_mel, post_pred, trg_mel, stop_pred, stop_trg)

            # mel cepstral distortion of the free-running prediction
            for j, (gen, ref, stop) in enumerate(zip(post_pred_0, trg_mel, stop_pred_probs)):
                stop_idxes = np.where(stop.data.cpu().numpy() > 0.5)[0]
                stop_idx = min(np.min(stop_idxes) + stop_frames, gen.size()[1]) if len(stop_idxes) > 0 else gen.size()[1]
                gen = gen[:, :stop_idx].data.cpu().numpy()
                ref = ref[:, :trg_len[j]].data.cpu().numpy()
                mcd = (mcd_count * mcd + mel_cepstral_distortion(gen, ref)) / (mcd_count + 1)
                mcd_count += 1

            # add batch losses to epoch losses
            for k, v in batch_losses.items():
                eval_losses[k] = v + eval_losses[k] if k in eval_losses else v

    for k in eval_losses.keys():
        eval_losses[k] /= len(data)

    logger.evaluation(epoch + 1, eval_losses, mcd, src_len, trg_len, src, post_pred, post_pred_0, alignment_0)
    return sum(eval_losses.values())
