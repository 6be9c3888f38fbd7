# Source: https://github.com/ExplainableML/czsl/blob/5c0cdae97397db442e355699ef28f656c4bf8caa/train.py
# Report: ExplainableML/czsl issue #7: CUDA out of memory in evaluate_predictions after the test pass; the maintainer added a --cpu_eval flag so the gathered predictions are kept in CPU memory
# Shape: the --cpu_eval path done at append time: each prediction dict is copied to the CPU before it is kept (test() still runs under the caller's no_grad)
# Expect: near-miss: must be silent
import torch
from tqdm import tqdm

device = "cuda" if torch.cuda.is_available() else "cpu"
best_auc, best_hm = 0.0, 0.0


def train_normal(epoch, image_extractor, model, trainloader, optimizer, writer):
    model.train()
    train_loss = 0.0
    for idx, data in tqdm(enumerate(trainloader), total=len(trainloader)):
        data = [d.to(device) for d in data]
        if image_extractor:
            data[0] = image_extractor(data[0])
        loss, _ = model(data)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        train_loss += loss.item()
    writer.add_scalar("Loss/train_total", train_loss / len(trainloader), epoch)


def test(epoch, image_extractor, model, testloader, evaluator, writer, args):
    global best_auc, best_hm
    if image_extractor:
        image_extractor.eval()
    model.eval()

    all_attr_gt, all_obj_gt, all_pair_gt, all_pred = [], [], [], []
    for idx, data in tqdm(enumerate(testloader), total=len(testloader), desc="Testing"):
        attr_truth, obj_truth, pair_truth = data[1], data[2], data[3]
        images = data[0].to(device)
        if image_extractor:
            images = image_extractor(images)

        _, predictions = model([images, attr_truth, obj_truth, pair_truth])

        all_pred.append({k: v.cpu() for k, v in predictions.items()})
        all_attr_gt.append(attr_truth)
        all_obj_gt.append(obj_truth)
        all_pair_gt.append(pair_truth)

    all_attr_gt, all_obj_gt, all_pair_gt = torch.cat(all_attr_gt), torch.cat(all_obj_gt), torch.cat(all_pair_gt)
    all_pred_dict = {}
    for k in all_pred[0].keys():
        all_pred_dict[k] = torch.cat([all_pred[i][k] for i in range(len(all_pred))])

    results = evaluator.score_model(all_pred_dict, all_obj_gt, bias=args.bias, topk=args.topk)
    stats = evaluator.evaluate_predictions(results, all_attr_gt, all_obj_gt, all_pair_gt, all_pred_dict, topk=args.topk)
    for key in stats:
        writer.add_scalar(key, stats[key], epoch)
    best_auc = max(best_auc, stats["AUC"])
    best_hm = max(best_hm, stats["best_hm"])
    return stats


def main(args, image_extractor, model, optimizer, trainloader, testloader, evaluator_val, writer):
    for epoch in range(args.max_epochs + 1):
        train_normal(epoch, image_extractor, model, trainloader, optimizer, writer)
        if epoch % args.eval_val_every == 0:
            with torch.no_grad():
                test(epoch, image_extractor, model, testloader, evaluator_val, writer, args)
    print("Best AUC achieved is ", best_auc)
