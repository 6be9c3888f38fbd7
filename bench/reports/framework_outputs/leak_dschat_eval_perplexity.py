# Source: https://github.com/cpppy/expGPT/blob/94b1e950f815aceebe95449f9147cbd365b62dcc/finetune_dsp/eval.py
# Report: audit of a DeepSpeed-Chat style SFT eval: correct as written (forward under no_grad, outputs.loss summed as a device scalar); this is the variant it avoids, with the no_grad block dropped so every outputs.loss summed into losses keeps its batch's graph
# Shape: evaluation() nested in main() runs model(**batch) on an HF causal LM, reads outputs.loss and sums loss.float() into a name bound before the loop; perplexity is taken after the loop
# Expect: TML003 line 32; TML001 line 34
import math

import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, default_data_collator, get_scheduler


def to_device(batch, device):
    return {k: v.to(device) if torch.is_tensor(v) else v for k, v in batch.items()}


def main(args, train_dataset, eval_dataset):
    device = torch.device("cuda")
    model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path).to(device)
    train_dataloader = DataLoader(train_dataset, shuffle=True, collate_fn=default_data_collator,
                                  batch_size=args.per_device_train_batch_size)
    eval_dataloader = DataLoader(eval_dataset, collate_fn=default_data_collator,
                                 batch_size=args.per_device_eval_batch_size)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    lr_scheduler = get_scheduler("cosine", optimizer=optimizer, num_warmup_steps=args.num_warmup_steps,
                                 num_training_steps=args.num_train_epochs * len(train_dataloader))

    def evaluation(model, eval_dataloader):
        model.eval()
        losses = 0
        for step, batch in enumerate(eval_dataloader):
            batch = to_device(batch, device)
            outputs = model(**batch)  # expect: TML003
            loss = outputs.loss
            losses += loss.float()  # expect: TML001
        losses = losses / (step + 1)
        try:
            perplexity = torch.exp(losses).item()
        except OverflowError:
            perplexity = float("inf")
        return perplexity, losses.item()

    perplexity, eval_loss = evaluation(model, eval_dataloader)
    print(f"ppl before training: {perplexity:.2f} (loss {eval_loss:.4f})")
    for epoch in range(args.num_train_epochs):
        model.train()
        for step, batch in enumerate(train_dataloader):
            batch = to_device(batch, device)
            outputs = model(**batch, use_cache=False)
            loss = outputs.loss
            loss.backward()
            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad()
            if step % args.print_loss_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
        perplexity, eval_loss = evaluation(model, eval_dataloader)
        print(f"epoch {epoch}: ppl {perplexity:.2f}, eval loss {eval_loss:.4f}, "
              f"est. {math.exp(min(eval_loss, 50)):.2f}")
    model.save_pretrained(args.output_dir)
