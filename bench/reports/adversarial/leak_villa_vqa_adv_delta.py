# Source: https://github.com/zhegan27/VILLA/blob/8aa6ac25a389f0168f873581079e2fc02a9ab674/train_vqa_adv.py
# Report: VILLA issue #4 (https://github.com/zhegan27/VILLA/issues/4): GPU memory grows epoch after epoch while fine-tuning VQA with adversarial training; the original re-detaches the embedding perturbation after every ascent step
# Shape: the img/txt delta is updated as delta = delta + step without .detach(), so each adversarial step's delta links to the previous one (loop-carried graph)
# Expect: TML005 line 58; TML005 line 63
import torch
import torch.nn.functional as F


def adv_train_step(model, batch, optimizer, opts, running_loss):
    txt_embeds_init = model.uniter.embeddings.word_embeddings(batch['input_ids'])
    img_embeds_init = batch['img_feat']
    txt_delta = torch.zeros_like(txt_embeds_init)
    img_delta = torch.zeros_like(img_embeds_init)

    gt_answer_scores = model(batch, compute_loss=False)
    gt_answer_prob = F.softmax(gt_answer_scores, dim=1)
    gt_answer_logprob = F.log_softmax(gt_answer_scores, dim=1)

    for astep in range(opts.adv_steps):
        txt_delta.requires_grad_()
        img_delta.requires_grad_()
        answer_scores = model(batch, adv_training=True,
                              adv_modality=opts.adv_modality,
                              adv_delta_txt=txt_delta,
                              adv_delta_img=img_delta,
                              compute_loss=False)
        bce_loss = F.binary_cross_entropy_with_logits(
            answer_scores, batch['targets'], reduction='none')
        bce_loss = bce_loss.mean() * batch['targets'].size(1)

        answer_prob = F.softmax(answer_scores, dim=1)
        answer_logprob = F.log_softmax(answer_scores, dim=1)
        kl_loss = F.kl_div(answer_logprob, gt_answer_prob, reduction='none') + \
            F.kl_div(gt_answer_logprob, answer_prob, reduction='none')
        kl_loss = kl_loss.mean() * batch['targets'].size(1)

        loss = (bce_loss + opts.adv_kl_weight * kl_loss) / opts.adv_steps
        loss.backward(retain_graph=True)
        running_loss(loss.item())

        if astep == opts.adv_steps - 1:
            break

        txt_delta_grad = txt_delta.grad.clone().detach().float()
        img_delta_grad = img_delta.grad.clone().detach().float()

        denorm = torch.norm(txt_delta_grad.view(txt_delta_grad.size(0), -1),
                            dim=1).view(-1, 1, 1)
        denorm = torch.clamp(denorm, min=1e-8)
        txt_delta_step = (opts.adv_lr_txt * txt_delta_grad / denorm).to(txt_delta)

        denorm = torch.norm(img_delta_grad.view(img_delta_grad.size(0), -1),
                            dim=1).view(-1, 1, 1)
        denorm = torch.clamp(denorm, min=1e-8)
        img_delta_step = (opts.adv_lr_img * img_delta_grad / denorm).to(img_delta)

        # ascent step, then project back into the L2 ball
        txt_delta = txt_delta + txt_delta_step  # expect: TML005
        if opts.adv_max_norm > 0:
            txt_delta = torch.clamp(txt_delta, -opts.adv_max_norm,
                                    opts.adv_max_norm)

        img_delta = img_delta + img_delta_step  # expect: TML005
        if opts.adv_max_norm > 0:
            img_delta = torch.clamp(img_delta, -opts.adv_max_norm,
                                    opts.adv_max_norm)

    optimizer.step()
    optimizer.zero_grad()
