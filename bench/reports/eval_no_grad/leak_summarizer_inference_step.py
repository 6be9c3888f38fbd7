# Source: https://github.com/Ravoxsg/SummaReranker/blob/5d284fba1d533b0665e0379ba0f93821208996c8/src/base_model_finetuning/engine.py
# Report: audit: validate() puts the fine-tuned PEGASUS/BART summarizer in eval() and, per batch, calls inference_step(), which runs model(**inputs, labels=...) with grad enabled and returns outputs["loss"]
# Shape: validate() loops over the loader; the helper inference_step() does the HF forward and returns the dict's loss, whose .item() is kept; summaries come from generate()
# Expect: TML003 line 17
import gc
import time

import numpy as np
import torch


def inference_step(batch, model, device):
    text = {k: v.squeeze(1).to(device) for k, v in batch["text_inputs"].items()}
    summary = {k: v.squeeze(1).to(device) for k, v in batch["summary_inputs"].items()}
    labels = summary["input_ids"]
    # seq2seq forward with labels: encoder + decoder activations saved for a backward that never runs
    outputs = model(**text, labels=labels)  # expect: TML003
    return outputs["loss"]


def generation_step(batch, tokenizer, model, device, args):
    text = {k: v.squeeze(1).to(device) for k, v in batch["text_inputs"].items()}
    summary_ids = model.pretrained_model.generate(
        text["input_ids"],
        attention_mask=text["attention_mask"],
        num_beams=args.num_beams,
        max_length=args.max_summary_length,
        length_penalty=args.length_penalty,
        no_repeat_ngram_size=args.no_repeat_ngram_size,
        early_stopping=True,
    )
    return tokenizer.batch_decode(summary_ids, skip_special_tokens=True)


def validate(mode, loader, all_losses, tokenizer, model, device, args, scorer=None):
    print(f"evaluating on {mode}")
    start = time.time()
    model.eval()
    val_losses, val_summaries, val_labels = [], [], []
    for batch in loader:
        model.zero_grad()
        if args.inference:
            loss = inference_step(batch, model, device)
            val_losses.append(loss.item())
        if args.generation:
            val_summaries += generation_step(batch, tokenizer, model, device, args)
            val_labels += batch["summary"]
        del batch
        gc.collect()
    if val_losses:
        mean_loss = float(np.mean(val_losses))
        all_losses.append(mean_loss)
        print(f"mean {mode} loss {mean_loss:.4f}")
    if val_summaries and scorer is not None:
        print(scorer(val_summaries, val_labels))
    print(f"done in {time.time() - start:.1f}s")
    return all_losses
