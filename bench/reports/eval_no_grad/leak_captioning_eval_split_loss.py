# Source: https://github.com/ruotianluo/ImageCaptioning.pytorch/blob/225358067929e1e6fa41fc70d773b8ed3e4d345d/captioning/utils/eval_utils.py
# Report: eval_split of the self-critical captioning codebase computes a validation language-model loss for every batch next to the sampled captions; the original wraps that forward in torch.no_grad() and keeps loss.item()
# Shape: the loss forward runs after model.eval() without no_grad, and the tensor is summed into loss_sum that lives across the whole split, so every batch's decoder graph stays alive until eval_split returns
# Expect: TML003 line 36; TML001 line 38
import os

import torch
import torch.nn.functional as F

from . import misc as utils


def eval_split(model, crit, loader, eval_kwargs={}):
    verbose = eval_kwargs.get('verbose', True)
    verbose_loss = eval_kwargs.get('verbose_loss', 1)
    num_images = eval_kwargs.get('num_images', eval_kwargs.get('val_images_use', -1))
    split = eval_kwargs.get('split', 'val')
    device = eval_kwargs.get('device', 'cuda')

    model.eval()
    loader.reset_iterator(split)

    n = 0
    loss = 0
    loss_sum = 0
    loss_evals = 1e-8
    predictions = []
    while True:
        data = loader.get_batch(split)
        n = n + len(data['infos'])
        tmp = [data['fc_feats'], data['att_feats'], data['labels'], data['masks'], data['att_masks']]
        tmp = [_.to(device) if _ is not None else _ for _ in tmp]
        fc_feats, att_feats, labels, masks, att_masks = tmp
        if labels is not None and verbose_loss:
            # forward the model to get loss
            loss = crit(model(fc_feats, att_feats, labels[..., :-1], att_masks),  # expect: TML003
                        labels[..., 1:], masks[..., 1:])
            loss_sum = loss_sum + loss  # expect: TML001
            loss_evals = loss_evals + 1

        # forward the model to also get generated samples for each image
        with torch.no_grad():
            tmp_eval_kwargs = eval_kwargs.copy()
            tmp_eval_kwargs.update({'sample_n': 1})
            seq, seq_logprobs = model(fc_feats, att_feats, att_masks,
                                      opt=tmp_eval_kwargs, mode='sample')
            seq = seq.data
            entropy = - (F.softmax(seq_logprobs, dim=2) * seq_logprobs).sum(2).sum(1) \
                / ((seq > 0).float().sum(1) + 1)

        sents = utils.decode_sequence(model.vocab, seq)
        for k, sent in enumerate(sents):
            entry = {'image_id': data['infos'][k]['id'], 'caption': sent,
                     'entropy': entropy[k].item()}
            predictions.append(entry)
            if verbose:
                print('image %s: %s' % (entry['image_id'], entry['caption']))

        ix1 = data['bounds']['it_max']
        if num_images != -1:
            ix1 = min(ix1, num_images)
        else:
            num_images = ix1
        for i in range(n - ix1):
            predictions.pop()
        if num_images >= 0 and n >= num_images:
            break

    if not os.path.isdir('eval_results'):
        os.mkdir('eval_results')
    model.train()
    return loss_sum / loss_evals, predictions
