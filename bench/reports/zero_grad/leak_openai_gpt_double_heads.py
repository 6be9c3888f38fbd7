# Source: https://github.com/huggingface/transformers/issues/340
# Report: the run_openai_gpt.py fine-tuning example called optimizer.step() every batch but never zeroed the gradients between minibatches; the maintainer confirmed the mistake and fixed it
# Shape: double-heads model returns a (lm_loss, mc_loss) tuple that is combined with a coefficient; loss bookkeeping uses .item(); no gradient reset on any path of the batch loop
# Expect: TML002 line 39
import torch
from tqdm import tqdm, trange

from pytorch_pretrained_bert import OpenAIAdam, OpenAIGPTDoubleHeadsModel


def train(args, train_dataloader, eval_dataloader, special_tokens):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = OpenAIGPTDoubleHeadsModel.from_pretrained(
        args.model_name, num_special_tokens=len(special_tokens))
    model.to(device)
    param_optimizer = list(model.named_parameters())
    no_decay = ["bias", "LayerNorm.bias", "LayerNorm.weight"]
    groups = [
        {"params": [p for n, p in param_optimizer if not any(nd in n for nd in no_decay)], "weight_decay": 0.01},
        {"params": [p for n, p in param_optimizer if any(nd in n for nd in no_decay)], "weight_decay": 0.0},
    ]
    num_train_optimization_steps = len(train_dataloader) * args.num_train_epochs
    optimizer = OpenAIAdam(groups, lr=args.learning_rate, warmup=args.warmup_proportion,
                           max_grad_norm=args.max_grad_norm, weight_decay=args.weight_decay,
                           t_total=num_train_optimization_steps)

    nb_tr_steps, tr_loss, exp_average_loss = 0, 0, None
    model.train()
    for _ in trange(int(args.num_train_epochs), desc="Epoch"):
        tr_loss = 0
        nb_tr_steps = 0
        tqdm_bar = tqdm(train_dataloader, desc="Training")
        for step, batch in enumerate(tqdm_bar):
            batch = tuple(t.to(device) for t in batch)
            input_ids, mc_token_ids, lm_labels, mc_labels = batch
            losses = model(input_ids, mc_token_ids, lm_labels, mc_labels)
            loss = args.lm_coef * losses[0] + losses[1]
            loss.backward()
            optimizer.step()  # expect: TML002
            tr_loss += loss.item()
            if exp_average_loss is None:
                exp_average_loss = loss.item()
            else:
                exp_average_loss = 0.7 * exp_average_loss + 0.3 * loss.item()
            nb_tr_steps += 1
            tqdm_bar.desc = "Training loss: {:.2e} lr: {:.2e}".format(
                exp_average_loss, optimizer.get_lr()[0])

    model.eval()
    eval_loss, nb_eval_steps = 0, 0
    for batch in tqdm(eval_dataloader, desc="Evaluating"):
        input_ids, mc_token_ids, lm_labels, mc_labels = tuple(t.to(device) for t in batch)
        with torch.no_grad():
            _, mc_loss = model(input_ids, mc_token_ids, lm_labels, mc_labels)
        eval_loss += mc_loss.mean().item()
        nb_eval_steps += 1
    return tr_loss / max(nb_tr_steps, 1), eval_loss / max(nb_eval_steps, 1)
