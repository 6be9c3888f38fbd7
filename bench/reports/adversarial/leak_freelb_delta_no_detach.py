# Source: https://github.com/zhuchen03/FreeLB/issues/18
# Report: FreeLB adversarial fine-tuning of BERT/ALBERT on GLUE (huggingface-transformers/examples/run_glue_freelb.py @2100e74); issue #18 asks whether the several .detach() calls on delta / delta_grad / delta_norm can be deleted
# Shape: the ascent update drops its .detach() (retain_grad() added so delta.grad still exists): each new delta is a non-leaf built from the previous one, so the perturbation carries the graph of every earlier ascent step of the batch (runtime: .grad/graph chain grows with adv_steps)
# Expect: TML005 line 49
import torch


def word_embeddings(model, input_ids):
    if isinstance(model, torch.nn.DataParallel):
        return model.module.encoder.embeddings.word_embeddings(input_ids)
    return model.encoder.embeddings.word_embeddings(input_ids)


def init_delta(args, embeds_init, input_mask):
    if args.adv_init_mag <= 0:
        return torch.zeros_like(embeds_init)
    input_lengths = torch.sum(input_mask, 1)
    delta = torch.zeros_like(embeds_init).uniform_(-1, 1) * input_mask.unsqueeze(2)
    mag = args.adv_init_mag / torch.sqrt(input_lengths * embeds_init.size(-1))
    return (delta * mag.view(-1, 1, 1)).detach()


def freelb_step(args, model, batch, optimizer, scheduler, step, tr_loss):
    inputs = {"attention_mask": batch[1], "token_type_ids": batch[2], "labels": batch[3]}
    embeds_init = word_embeddings(model, batch[0])
    delta = init_delta(args, embeds_init, inputs["attention_mask"].to(embeds_init))

    dp_masks = None
    for astep in range(args.adv_steps):
        delta.requires_grad_()
        delta.retain_grad()
        inputs["inputs_embeds"] = delta + embeds_init
        inputs["dp_masks"] = dp_masks

        outputs, dp_masks = model(**inputs)
        loss = outputs[0]
        if args.gradient_accumulation_steps > 1:
            loss = loss / args.gradient_accumulation_steps
        loss = loss / args.adv_steps
        tr_loss += loss.item()
        loss.backward()

        if astep == args.adv_steps - 1:
            break

        delta_grad = delta.grad.clone().detach()
        denorm = torch.norm(delta_grad.view(delta_grad.size(0), -1), dim=1).view(-1, 1, 1)
        denorm = torch.clamp(denorm, min=1e-8)
        delta = delta + args.adv_lr * delta_grad / denorm  # expect: TML005
        if args.adv_max_norm > 0:
            delta = torch.clamp(delta, -args.adv_max_norm, args.adv_max_norm)
        embeds_init = word_embeddings(model, batch[0])

    if (step + 1) % args.gradient_accumulation_steps == 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
        optimizer.step()
        scheduler.step()
        model.zero_grad()
    return tr_loss
